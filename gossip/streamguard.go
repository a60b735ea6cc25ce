package gossip

import (
	"io"
	"log/slog"
	"net"
	"sync"

	"github.com/hashicorp/memberlist"

	"github.com/shoal-hpc/shoal/internal/connlimit"
)

// streamGuard wraps memberlist's TCP/UDP transport so that strangers cannot
// exhaust the agent through inbound streams before memberlist decrypts
// them. Every inbound stream takes a slot (capped in total and per source
// address; over the cap it is closed at once), and its first message may
// declare at most capFn() bytes, booked against a shared budget until they
// have passed. Packets and outbound streams pass through untouched.
//
// memberlist puts its TCPTimeout deadline on a stream as soon as it takes
// it from StreamCh, and the header check runs inside memberlist's first
// read, so a stranger who trickles bytes holds a slot for at most that
// long.
type streamGuard struct {
	memberlist.NodeAwareTransport
	slots *streamSlots
	capFn func() int
	log   *slog.Logger

	out  chan net.Conn
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
}

var _ memberlist.NodeAwareTransport = (*streamGuard)(nil)

func newStreamGuard(nt memberlist.NodeAwareTransport, slots *streamSlots, capFn func() int, log *slog.Logger) *streamGuard {
	g := &streamGuard{NodeAwareTransport: nt, slots: slots, capFn: capFn, log: log, out: make(chan net.Conn), stop: make(chan struct{})}
	g.done.Add(1)
	go g.forward()
	return g
}

// StreamCh hands memberlist the inbound streams the guard admitted.
func (g *streamGuard) StreamCh() <-chan net.Conn { return g.out }

// Shutdown stops the transport and the guard's forwarder.
func (g *streamGuard) Shutdown() error {
	err := g.NodeAwareTransport.Shutdown()
	g.once.Do(func() { close(g.stop) })
	g.done.Wait()
	return err
}

func (g *streamGuard) forward() {
	defer g.done.Done()
	in := g.NodeAwareTransport.StreamCh()
	for {
		var c net.Conn
		select {
		case c = <-in:
		case <-g.stop:
			return
		}
		src := connlimit.SourceIP(c)
		if !g.slots.admit(src) {
			g.log.Debug("gossip stream refused: too many open", "src", src)
			_ = c.Close()
			continue
		}
		gc := &guardedConn{Conn: c, guard: g, src: src}
		select {
		case g.out <- gc:
		case <-g.stop:
			_ = gc.Close()
			return
		}
	}
}

// guardedConn is one admitted inbound stream. memberlist reads it from one
// goroutine; Close may come from another (shutdown).
type guardedConn struct {
	net.Conn
	guard *streamGuard
	src   string

	// Read state, touched only by the reading goroutine.
	hdr     []byte // header still to hand to the reader
	checked bool
	left    int64 // bytes of the first message not yet read

	mu       sync.Mutex
	reserved int64
	closed   bool
}

func (c *guardedConn) Read(p []byte) (int, error) {
	if !c.checked {
		if err := c.check(); err != nil {
			_ = c.Close()
			return 0, err
		}
	}
	if len(c.hdr) > 0 {
		n := copy(p, c.hdr)
		c.hdr = c.hdr[n:]
		return n, nil
	}
	n, err := c.Conn.Read(p)
	if c.left > 0 {
		c.left -= int64(n)
		if c.left <= 0 {
			// The first message is in memberlist's hands: it is decrypted
			// (or the stream is dropped) before anything else is read.
			c.unreserve()
		}
	}
	return n, err
}

// check reads the frame header and books the bytes it declares.
func (c *guardedConn) check() error {
	c.checked = true
	h := make([]byte, streamHeaderLen)
	if _, err := io.ReadFull(c.Conn, h); err != nil {
		return err
	}
	n, err := parseStreamHeader(h, c.guard.capFn())
	if err != nil {
		c.guard.log.Debug("gossip stream refused", "src", c.src, "err", err)
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || !c.guard.slots.reserve(int64(n)) {
		c.guard.log.Debug("gossip stream refused: pre-authentication budget used up", "src", c.src, "bytes", n)
		return ErrStreamRefused
	}
	c.reserved, c.left, c.hdr = int64(n), int64(n), h
	return nil
}

func (c *guardedConn) unreserve() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.guard.slots.unreserve(c.reserved)
	c.reserved = 0
}

func (c *guardedConn) Close() error {
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	c.guard.slots.unreserve(c.reserved)
	c.reserved = 0
	c.mu.Unlock()
	if first {
		c.guard.slots.leave(c.src)
	}
	return c.Conn.Close()
}
