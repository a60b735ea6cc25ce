package connlimit

import (
	"net"
	"sync"
)

// Listener hands out connections only while Slots has room for their
// source; the others are closed on arrival and never reach the server.
type Listener struct {
	net.Listener
	slots *Slots
	key   func(net.Conn) string
	// OnRefuse, when set, is told of each refused connection (for a log
	// line or a counter). It must not block.
	OnRefuse func(src string)
}

// NewListener caps ln's open connections with slots, keyed by key (SourceIP
// for TCP; nil counts every connection in the total only).
func NewListener(ln net.Listener, slots *Slots, key func(net.Conn) string) *Listener {
	if key == nil {
		key = func(net.Conn) string { return "" }
	}
	return &Listener{Listener: ln, slots: slots, key: key}
}

// Accept returns the next connection that fits under the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := l.key(c)
		if !l.slots.Take(src) {
			_ = c.Close()
			if l.OnRefuse != nil {
				l.OnRefuse(src)
			}
			continue
		}
		return &Conn{Conn: c, slots: l.slots, src: src}, nil
	}
}

// Conn is an accepted connection holding a slot until it is closed.
type Conn struct {
	net.Conn
	slots *Slots
	src   string
	once  sync.Once
}

// Close closes the connection and gives its slot back (once).
func (c *Conn) Close() error {
	c.once.Do(func() { c.slots.Give(c.src) })
	return c.Conn.Close()
}

// Unwrap returns the accepted connection itself, for code that needs its
// concrete type (a *net.UnixConn's peer credentials).
func (c *Conn) Unwrap() net.Conn { return c.Conn }
