package ui

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// Config is what the dashboard needs of its agent.
type Config struct {
	// Key signs session cookies and CSRF tokens; every agent of a cluster
	// must hold the same one (derived from the cluster token).
	Key []byte
	// Token is the cluster token a login must present.
	Token string
	// Node is this agent's name, shown in the page's header.
	Node string
	// TTL is how long a session lasts, from login. Default 12h.
	TTL time.Duration
	// Clock reads the time; nil is time.Now.
	Clock  func() time.Time
	Logger *slog.Logger
}

// DefaultTTL is Config.TTL's default: a working day.
const DefaultTTL = 12 * time.Hour

// Validate names what is missing.
func (c Config) Validate() error {
	switch {
	case len(c.Key) < 16:
		return errors.New("ui: the session key is shorter than 16 bytes")
	case c.Token == "":
		return errors.New("ui: the cluster token is empty")
	case c.TTL < 0:
		return fmt.Errorf("ui: session lifetime %v is negative", c.TTL)
	}
	return nil
}

// Server serves /ui/ and checks session cookies for the API.
type Server struct {
	cfg   Config
	sess  sessions
	log   *slog.Logger
	index *template.Template
	login *template.Template
	files fs.FS
}

// New returns the dashboard of one agent.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	now := cfg.Clock
	if now == nil {
		now = time.Now
	}
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("ui: embedded assets: %w", err)
	}
	s := &Server{cfg: cfg, sess: sessions{key: cfg.Key, ttl: cmp.Or(cfg.TTL, DefaultTTL), now: now},
		log: cmp.Or(cfg.Logger, slog.Default()), files: files}
	if s.index, err = template.ParseFS(files, "index.html"); err != nil {
		return nil, fmt.Errorf("ui: index page: %w", err)
	}
	if s.login, err = template.ParseFS(files, "login.html"); err != nil {
		return nil, fmt.Errorf("ui: login page: %w", err)
	}
	return s, nil
}

// Authorize checks r's session cookie for the API: ErrNoSession when it
// has none that is valid (the caller then tries its other credentials),
// ErrCrossSite when a write lacks the session's CSRF token or comes from
// another origin.
func (s *Server) Authorize(r *http.Request) (Session, error) {
	sess, err := s.session(r)
	if err != nil {
		return Session{}, err
	}
	if safeMethod(r.Method) {
		return sess, nil
	}
	if !sameOrigin(r) {
		return Session{}, fmt.Errorf("%w: the request came from %q, not this agent's page",
			ErrCrossSite, cmp.Or(r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")))
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.sess.csrf(sess))) != 1 {
		return Session{}, fmt.Errorf("%w: a write with the dashboard's cookie needs its %s header", ErrCrossSite, CSRFHeader)
	}
	return sess, nil
}

func (s *Server) session(r *http.Request) (Session, error) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return Session{}, ErrNoSession
	}
	return s.sess.check(c.Value)
}

// ServeHTTP serves the login, the logout and, to a session, the pages.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	p := strings.TrimPrefix(r.URL.Path, "/ui")
	switch {
	case p == "/login" && r.Method == http.MethodPost:
		s.handleLogin(w, r)
		return
	case p == "/login" && safeMethod(r.Method):
		if _, err := s.session(r); err == nil {
			http.Redirect(w, r, "/ui/", http.StatusSeeOther)
			return
		}
		s.loginPage(w, http.StatusOK, "")
		return
	case p == "/login.css" && safeMethod(r.Method):
		// The login page's only asset: it holds no data.
		s.serveFile(w, r, "login.css")
		return
	}
	sess, err := s.Authorize(r)
	switch {
	case errors.Is(err, ErrCrossSite):
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	case err != nil && safeMethod(r.Method):
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	switch {
	case p == "/logout" && r.Method == http.MethodPost:
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
			Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	case !safeMethod(r.Method):
		http.Error(w, "the dashboard takes no "+r.Method+" at "+r.URL.Path, http.StatusMethodNotAllowed)
	case p == "/" || p == "" || p == "/index.html":
		s.indexPage(w, sess)
	default:
		s.serveFile(w, r, strings.TrimPrefix(path.Clean(p), "/"))
	}
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		// A login forged from another site would put the victim's browser
		// in the forger's session.
		http.Error(w, fmt.Sprintf("%v: the login came from %q; log in from this agent's own login page",
			ErrCrossSite, cmp.Or(r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"))), http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) != 1 {
		s.log.Info("dashboard login refused", "remote", r.RemoteAddr)
		s.loginPage(w, http.StatusUnauthorized, "That is not this cluster's token. Paste the contents of the agent's token file.")
		return
	}
	v, sess, err := s.sess.issue()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: v, Path: "/", Expires: sess.Expires,
		MaxAge: int(time.Until(sess.Expires).Seconds()), Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	s.log.Info("dashboard login", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (s *Server) loginPage(w http.ResponseWriter, code int, msg string) {
	var b bytes.Buffer
	if err := s.login.Execute(&b, map[string]string{"Node": s.cfg.Node, "Error": msg}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

func (s *Server) indexPage(w http.ResponseWriter, sess Session) {
	var b bytes.Buffer
	if err := s.index.Execute(&b, map[string]string{"Node": s.cfg.Node, "CSRF": s.sess.csrf(sess)}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

// serveFile serves one embedded asset; the HTML templates are not files.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	if strings.HasSuffix(name, ".html") {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(s.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	// Assets change only with the binary; revalidating costs little.
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// securityHeaders keeps the pages to the agent's own scripts and styles
// and out of other sites' frames.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
		"connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the page's own form posts, which sameOrigin
	// must then refuse.
	h.Set("Referrer-Policy", "same-origin")
}
