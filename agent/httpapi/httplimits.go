package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/internal/connlimit"
)

// Limits bound what the API server gives a connection, above all one
// that never shows a token: the health route answers anybody, and every
// other route reads a request before it can refuse it.
type Limits struct {
	// HeaderTimeout is how long a connection has to send a request's
	// headers. Default 10s.
	HeaderTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request in
	// flight. Default 60s.
	IdleTimeout time.Duration
	// RequestTimeout bounds reading a request's body and writing its
	// answer. Streaming answers (logs --follow, exec) lift it once the
	// caller is authenticated; they may run for hours. Default 30s, the
	// CLI's own timeout for a non-streaming call.
	RequestTimeout time.Duration
	// MaxConns caps the open connections of each listener (TCP and the
	// local socket, apart). Default 4096.
	MaxConns int
	// MaxConnsPerSource caps the open TCP connections from one IP address.
	// Default 256.
	MaxConnsPerSource int
	// MaxConnsPerUser caps the open local-socket connections of one uid
	// (the kernel's word, SO_PEERCRED, at accept). Every local user shares
	// the socket, and a followed log or an exec stream holds its connection
	// as long as the job runs: with one cap for all, one user who opened
	// MaxConns of them locked everyone else out. Default 256.
	MaxConnsPerUser int
}

// DefaultLimits returns the production limits.
func DefaultLimits() Limits {
	return Limits{
		HeaderTimeout:     10 * time.Second,
		IdleTimeout:       60 * time.Second,
		RequestTimeout:    30 * time.Second,
		MaxConns:          4096,
		MaxConnsPerSource: 256,
		MaxConnsPerUser:   256,
	}
}

// Validate names the first limit out of bounds.
func (l Limits) Validate() error {
	switch {
	case l.HeaderTimeout <= 0:
		return fmt.Errorf("HTTP header timeout %v must be positive", l.HeaderTimeout)
	case l.IdleTimeout <= 0:
		return fmt.Errorf("--http-idle-timeout %v must be positive", l.IdleTimeout)
	case l.RequestTimeout <= 0:
		return fmt.Errorf("--http-request-timeout %v must be positive", l.RequestTimeout)
	case l.MaxConns < 1 || l.MaxConnsPerSource < 1 || l.MaxConnsPerUser < 1:
		return fmt.Errorf("--http-max-conns %d, --http-max-conns-per-source %d and --http-max-conns-per-user %d must be at least 1", l.MaxConns, l.MaxConnsPerSource, l.MaxConnsPerUser)
	}
	return nil
}

// LimitListener caps ln's connections: per source address over TCP, per
// uid on the local socket, in all on either.
func (l Limits) LimitListener(ln net.Listener) net.Listener {
	if _, tcp := ln.Addr().(*net.TCPAddr); !tcp {
		return connlimit.NewListener(ln, connlimit.NewSlots(l.MaxConns, l.MaxConnsPerUser), peerUID)
	}
	return connlimit.NewListener(ln, connlimit.NewSlots(l.MaxConns, l.MaxConnsPerSource), connlimit.SourceIP)
}

// peerUID keys a local-socket connection by its sender's uid. A sender the
// kernel will not name shares one key with every other such sender (its
// requests are refused anyway, peerOf).
func peerUID(c net.Conn) string {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return "uid:?"
	}
	p := peerCred(uc)
	if p.err != nil {
		return "uid:?"
	}
	return "uid:" + strconv.FormatUint(uint64(p.uid), 10)
}

// withDeadlines gives every request RequestTimeout to be read and
// answered; liftDeadlines takes it off a streaming answer.
func (l Limits) withDeadlines(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// A connection deadline is the kernel's wall clock: never the injected one.
		end := time.Now().Add(l.RequestTimeout)
		_ = rc.SetReadDeadline(end)
		_ = rc.SetWriteDeadline(end)
		h.ServeHTTP(w, r)
	})
}

// liftDeadlines lets an authenticated streaming answer run as long as it
// needs. Call it only after the caller has been authenticated.
func liftDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// unwrapConn returns the connection a limiting listener wrapped.
func unwrapConn(c net.Conn) net.Conn {
	if u, ok := c.(interface{ Unwrap() net.Conn }); ok {
		return u.Unwrap()
	}
	return c
}
