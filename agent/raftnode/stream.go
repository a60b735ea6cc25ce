package raftnode

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/tlsca"
)

// raft's TCP transport accepts anybody who connects, and a raft peer can
// rewrite the whole desired state, which holds every job's --env. So raft
// runs only over TLS 1.3 with mutual authentication: both ends present a
// certificate of a trusted CA (the token's derived CA, or the site's), and
// the stream is encrypted. A stranger without such a certificate fails the
// handshake before raft sees a byte.
type tlsStream struct {
	ln        net.Listener
	advertise net.Addr
	server    *tls.Config
	client    *tls.Config
}

var _ raft.StreamLayer = (*tlsStream)(nil)

const handshakeTimeout = 5 * time.Second

// newTLSStream serves raft on ln, advertised as advertise, trusting roots
// and presenting leaf both ways.
func newTLSStream(ln net.Listener, advertise net.Addr, roots *x509.CertPool, leaf *tlsca.Leaf) *tlsStream {
	return &tlsStream{ln: ln, advertise: advertise,
		server: tlsca.ServerConfig(roots, leaf, tls.RequireAndVerifyClientCert),
		client: tlsca.ClientConfig(roots, leaf, tlsca.AgentServerName)}
}

func (s *tlsStream) Accept() (net.Conn, error) {
	c, err := s.ln.Accept()
	if err != nil {
		return nil, err
	}
	// The handshake runs on the first Read or Write, in the goroutine raft
	// gives the connection, so a slow stranger cannot stall Accept; it is
	// bounded so one cannot hold that goroutine either.
	return &serverConn{Conn: tls.Server(c, s.server)}, nil
}

func (s *tlsStream) Close() error   { return s.ln.Close() }
func (s *tlsStream) Addr() net.Addr { return s.advertise }

func (s *tlsStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: s.client}
	ctx, cancel := context.WithTimeout(context.Background(), max(timeout, handshakeTimeout))
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", string(addr))
	if err != nil {
		return nil, fmt.Errorf("dial raft peer %s over TLS: %w", addr, err)
	}
	return c, nil
}

// serverConn completes the TLS handshake, within handshakeTimeout, before
// the first byte is read or written.
type serverConn struct {
	*tls.Conn
	once sync.Once
	err  error
}

func (c *serverConn) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
		defer cancel()
		if c.err = c.Conn.HandshakeContext(ctx); c.err != nil {
			c.err = fmt.Errorf("raft peer %s failed the TLS handshake: %w", c.RemoteAddr(), c.err)
			c.Conn.Close()
		}
	})
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
