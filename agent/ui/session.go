package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// CookieName is the session cookie. The __Host- prefix makes the browser
// refuse it unless it is Secure, set by this origin and scoped to the
// whole host: no subdomain or plain-HTTP page can plant one.
const CookieName = "__Host-shoal_session"

// CSRFHeader carries the session's CSRF token on writes.
const CSRFHeader = "X-Shoal-CSRF"

var (
	// ErrNoSession means the request has no session cookie, or one that
	// is malformed, forged, expired or signed with another cluster's key.
	ErrNoSession = errors.New("no valid dashboard session")
	// ErrCrossSite means a write with a session cookie lacked the
	// session's CSRF token or came from another origin.
	ErrCrossSite = errors.New("cross-site request refused")
)

// Session is a verified session cookie.
type Session struct {
	Expires time.Time
	nonce   string
}

// sessions signs and checks session cookies and their CSRF tokens with key.
type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// issue returns a fresh session's cookie value.
func (s sessions) issue() (string, Session, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", Session{}, fmt.Errorf("session nonce: %w", err)
	}
	sess := Session{Expires: s.now().Add(s.ttl).Truncate(time.Second), nonce: base64.RawURLEncoding.EncodeToString(b)}
	body := "v1." + strconv.FormatInt(sess.Expires.Unix(), 10) + "." + sess.nonce
	return body + "." + s.mac("session", body), sess, nil
}

// check verifies a cookie value: well formed, signed with this key, not
// expired.
func (s sessions) check(v string) (Session, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 4 || parts[0] != "v1" {
		return Session{}, ErrNoSession
	}
	body := strings.Join(parts[:3], ".")
	if !hmac.Equal([]byte(parts[3]), []byte(s.mac("session", body))) {
		return Session{}, ErrNoSession
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return Session{}, ErrNoSession
	}
	sess := Session{Expires: time.Unix(exp, 0), nonce: parts[2]}
	if !s.now().Before(sess.Expires) {
		return Session{}, ErrNoSession
	}
	return sess, nil
}

// csrf is the CSRF token of sess: bound to the session, so a token read
// from one session is worthless in another.
func (s sessions) csrf(sess Session) string { return s.mac("csrf", sess.nonce) }

func (s sessions) mac(label, msg string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("shoal-ui/" + label + "/"))
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// safeMethod is a method that changes nothing: no CSRF token needed.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// sameOrigin reports whether r's Origin, when the browser sent one, is the
// agent's own (the scheme is https: the API listens only on TLS). Fetch
// metadata, where present, must say same-origin too.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Host, r.Host)
}
