package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// raft's TCP transport accepts anybody who connects, and a raft peer can
// rewrite the whole desired state. authStream makes both ends prove they
// hold the cluster token before raft sees a byte: a mutual
// challenge-response over HMAC-SHA256 with fresh nonces on each side. The
// stream itself stays plaintext; the threat is a stranger on the LAN
// writing to raft, not one reading job specs.
type authStream struct {
	ln        net.Listener
	advertise net.Addr
	key       []byte
}

var _ raft.StreamLayer = (*authStream)(nil)

const (
	raftMagic        = "SHOALR1\n"
	handshakeTimeout = 5 * time.Second
)

var errHandshake = errors.New("raft peer failed the cluster-token handshake")

func newAuthStream(ln net.Listener, advertise net.Addr, token string) *authStream {
	return &authStream{ln: ln, advertise: advertise, key: derive(token, "raft")}
}

func (s *authStream) Accept() (net.Conn, error) {
	c, err := s.ln.Accept()
	if err != nil {
		return nil, err
	}
	// The handshake runs on the first Read or Write, in the goroutine raft
	// gives the connection, so a slow stranger cannot stall Accept.
	return &serverConn{Conn: c, key: s.key}, nil
}

func (s *authStream) Close() error   { return s.ln.Close() }
func (s *authStream) Addr() net.Addr { return s.advertise }

func (s *authStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", string(addr), timeout)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := clientHandshake(c, s.key); err != nil {
		c.Close()
		return nil, fmt.Errorf("dial raft peer %s: %w", addr, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

func mac(key []byte, side string, a, b []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(side))
	m.Write(a)
	m.Write(b)
	return m.Sum(nil)
}

func clientHandshake(c net.Conn, key []byte) error {
	nc := make([]byte, 32)
	if _, err := rand.Read(nc); err != nil {
		return err
	}
	if _, err := c.Write(append([]byte(raftMagic), nc...)); err != nil {
		return fmt.Errorf("send challenge: %w", err)
	}
	buf := make([]byte, 64)
	if _, err := io.ReadFull(c, buf); err != nil {
		return fmt.Errorf("read server proof: %w", err)
	}
	ns, proof := buf[:32], buf[32:]
	if !hmac.Equal(proof, mac(key, "S", nc, ns)) {
		return errHandshake
	}
	if _, err := c.Write(mac(key, "C", nc, ns)); err != nil {
		return fmt.Errorf("send client proof: %w", err)
	}
	return nil
}

type serverConn struct {
	net.Conn
	key  []byte
	once sync.Once
	err  error
}

func (c *serverConn) handshake() error {
	c.once.Do(func() {
		_ = c.Conn.SetDeadline(time.Now().Add(handshakeTimeout))
		defer c.Conn.SetDeadline(time.Time{})
		hello := make([]byte, len(raftMagic)+32)
		if _, err := io.ReadFull(c.Conn, hello); err != nil {
			c.err = fmt.Errorf("read challenge: %w", err)
			return
		}
		if string(hello[:len(raftMagic)]) != raftMagic {
			c.err = errHandshake
			return
		}
		nc := hello[len(raftMagic):]
		ns := make([]byte, 32)
		if _, err := rand.Read(ns); err != nil {
			c.err = err
			return
		}
		if _, err := c.Conn.Write(append(ns, mac(c.key, "S", nc, ns)...)); err != nil {
			c.err = err
			return
		}
		proof := make([]byte, 32)
		if _, err := io.ReadFull(c.Conn, proof); err != nil {
			c.err = fmt.Errorf("read client proof: %w", err)
			return
		}
		if !hmac.Equal(proof, mac(c.key, "C", nc, ns)) {
			c.err = errHandshake
		}
	})
	if c.err != nil {
		c.Conn.Close()
	}
	return c.err
}

func (c *serverConn) Read(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *serverConn) Write(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
