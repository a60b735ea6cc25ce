package httpapi

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/ui"
)

// startUI serves be as agent "x" with token "tok" and the dashboard, over
// TLS (the session cookie is Secure), with the clock now.
func startUI(t *testing.T, be Backend, now func() time.Time) *httptest.Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Name, cfg.Token, cfg.CapabilityKey, cfg.SessionKey, cfg.Clock = "x", "tok", []byte("k"), []byte("0123456789abcdef-session"), now
	s, err := New(cfg, be)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// browser is a client with a cookie jar that does not follow redirects.
func browser(t *testing.T, ts *httptest.Server) *http.Client {
	jar, _ := cookiejar.New(nil)
	c := ts.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

func do(t *testing.T, c *http.Client, method, u string, body io.Reader, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, body)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestUI_LoginCookieAndCSRF: without a session the dashboard is its login
// page and the API a 401; a login with the token sets a Secure, HttpOnly,
// SameSite=Strict cookie that the API takes for reads; a write with it
// needs the session's CSRF token and this origin; a forged or expired
// cookie is no session.
func TestUI_LoginCookieAndCSRF(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	ts := startUI(t, &rowsBackend{}, clock)
	c := browser(t, ts)

	if r, _ := do(t, c, "GET", ts.URL+"/v1/net?forwarded=1", nil, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /v1/net without a session: %d, want 401", r.StatusCode)
	}
	if r, _ := do(t, c, "GET", ts.URL+"/ui/", nil, nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/ui/login" {
		t.Fatalf("GET /ui/ without a session: %d to %q, want a redirect to the login", r.StatusCode, r.Header.Get("Location"))
	}
	for _, asset := range []string{"/ui/app.js", "/ui/pages.js"} {
		if r, body := do(t, c, "GET", ts.URL+asset, nil, nil); r.StatusCode != http.StatusSeeOther || strings.Contains(body, "import") {
			t.Fatalf("GET %s without a session: %d, want the login", asset, r.StatusCode)
		}
	}
	form := func(tok string) io.Reader { return strings.NewReader(url.Values{"token": {tok}}.Encode()) }
	formHdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": ts.URL}
	if r, body := do(t, c, "POST", ts.URL+"/ui/login", form("wrong"), formHdr); r.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not this cluster") {
		t.Fatalf("login with a wrong token: %d %q, want 401 and the login page saying so", r.StatusCode, body)
	}
	if r, _ := do(t, c, "POST", ts.URL+"/ui/login", form("tok"), map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("login posted from another origin: %d, want 403", r.StatusCode)
	}
	r, _ := do(t, c, "POST", ts.URL+"/ui/login", form("tok"), formHdr)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("login with the token: %d, want 303", r.StatusCode)
	}
	set := r.Header.Get("Set-Cookie")
	for _, want := range []string{ui.CookieName + "=", "Secure", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(set, want) {
			t.Fatalf("session cookie %q lacks %s", set, want)
		}
	}
	if r, _ := do(t, c, "GET", ts.URL+"/v1/net?forwarded=1", nil, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/net with the session: %d, want 200", r.StatusCode)
	}
	r, page := do(t, c, "GET", ts.URL+"/ui/", nil, nil)
	m := regexp.MustCompile(`name="shoal-csrf" content="([^"]+)"`).FindStringSubmatch(page)
	if r.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET /ui/ with the session: %d, no CSRF token in %q", r.StatusCode, page)
	}
	csrf := m[1]
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("index page CSP %q: want the agent's own sources only and no framing", csp)
	}

	// A write: a raw command, refused for its body only once authenticated.
	apply := func(hdr map[string]string) (int, string) {
		r, body := do(t, c, "POST", ts.URL+"/v1/apply", strings.NewReader("not a command"), hdr)
		return r.StatusCode, body
	}
	for name, hdr := range map[string]map[string]string{
		"no CSRF token":           {"Origin": ts.URL},
		"a wrong CSRF token":      {"Origin": ts.URL, ui.CSRFHeader: csrf + "x"},
		"another origin":          {"Origin": "https://127.0.0.1:1", ui.CSRFHeader: csrf},
		"a cross-site fetch":      {"Sec-Fetch-Site": "same-site", ui.CSRFHeader: csrf},
		"a plain form, no header": {"Content-Type": "application/x-www-form-urlencoded"},
	} {
		if code, body := apply(hdr); code != http.StatusForbidden || !strings.Contains(body, "cross-site request refused") {
			t.Errorf("write with the cookie and %s: %d %s, want 403", name, code, body)
		}
	}
	if code, body := apply(map[string]string{"Origin": ts.URL, ui.CSRFHeader: csrf}); code != http.StatusBadRequest || !strings.Contains(body, "refused command") {
		t.Fatalf("write with the cookie and its CSRF token: %d %s, want past authentication to the body check", code, body)
	}

	// The cookie is bound to its signature and its expiry.
	u, _ := url.Parse(ts.URL)
	good := c.Jar.Cookies(u)[0].Value
	forged := browser(t, ts)
	forged.Jar.SetCookies(u, []*http.Cookie{{Name: ui.CookieName, Value: good[:len(good)-2] + "AA", Path: "/", Secure: true}})
	if r, _ := do(t, forged, "GET", ts.URL+"/v1/net?forwarded=1", nil, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a forged cookie: %d, want 401", r.StatusCode)
	}
	now = now.Add(ui.DefaultTTL + time.Second)
	if r, _ := do(t, c, "GET", ts.URL+"/v1/net?forwarded=1", nil, nil); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an expired session: %d, want 401", r.StatusCode)
	}
}
