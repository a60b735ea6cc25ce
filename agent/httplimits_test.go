package agent_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// dialFrom opens a TCP connection to addr from the loopback address src,
// so that the agent sees a source of its own.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tlsFrom is dialFrom with a TLS handshake on top, as any HTTPS client
// would make: the stranger has no certificate, only the CA to check ours.
func tlsFrom(t *testing.T, token, src, addr string) net.Conn {
	t.Helper()
	cfg := testcluster.ClientTLS(token)
	cfg.ServerName = "127.0.0.1"
	c := tls.Client(dialFrom(t, src, addr), cfg)
	if err := c.Handshake(); err != nil {
		t.Fatalf("TLS handshake from %s: %v", src, err)
	}
	return c
}

// closedWithin reports whether the server closes c (EOF or reset) within
// d, reading and discarding whatever it sends until then.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			ne, ok := err.(net.Error)
			return !ok || !ne.Timeout()
		}
	}
}

// TestHTTPStrangersCannotHoldTheAPI: a stranger keeps
// connections to the unauthenticated health route alive, opens more than
// its share, and trickles a request body. Its idle and slow connections are
// closed after the idle and request timeouts, its extra ones at once, and
// a member's API call still succeeds meanwhile; a job's followed output
// and an rsh exec stream run well past the timeouts.
func TestHTTPStrangersCannotHoldTheAPI(t *testing.T) {
	t.Parallel()
	const perSource = 8
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		// Long enough that the stranger's connections are all still held
		// while the test opens more (a loaded machine takes seconds for
		// the handshakes; at 1 s some had expired, freeing their slots).
		cfg.HTTP.IdleTimeout = 5 * time.Second
		cfg.HTTP.RequestTimeout = time.Second
		cfg.HTTP.MaxConnsPerSource = perSource
	})
	addr := strings.TrimPrefix(c.Client(0).Base, "https://")

	// The stranger's kept-alive health checks: answered, then held idle.
	var idle []net.Conn
	for range perSource {
		conn := tlsFrom(t, c.Token(), "127.0.0.2", addr)
		fmt.Fprintf(conn, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("health over a stranger's connection: %v %v", resp, err)
		}
		resp.Body.Close()
		idle = append(idle, conn)
	}
	// The same on the local socket.
	sock, err := net.Dial("unix", c.Agent(0).SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	fmt.Fprintf(sock, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(sock), nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health over the local socket: %v %v", resp, err)
	}
	idle = append(idle, sock)
	// Over its share: closed on arrival, long before the 10s header timeout.
	for i := range 4 {
		if conn := dialFrom(t, "127.0.0.2", addr); !closedWithin(conn, 2*time.Second) {
			t.Fatalf("connection %d over the per-source cap was kept open", perSource+i+1)
		}
	}
	// A member's call goes through while the stranger holds its share.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Client(0).Nodes(ctx); err != nil {
		t.Fatalf("a member's API call while a stranger holds %d connections: %v", perSource, err)
	}
	// A body promised and never sent: closed after the request timeout.
	slow := tlsFrom(t, c.Token(), "127.0.0.3", addr)
	fmt.Fprintf(slow, "POST /v1/apply HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"a\":")
	if !closedWithin(slow, 5*time.Second) {
		t.Fatal("a connection trickling a request body was held past the request timeout")
	}
	for i, conn := range idle {
		if !closedWithin(conn, 12*time.Second) {
			t.Fatalf("idle kept-alive connection %d still open 12s after it last answered (idle timeout 5s)", i)
		}
	}

	// Streams outlive the timeouts: `shoal run` follows the job's output
	// (logs -f) while the job's rsh holds an exec stream, ticking for 3s.
	tick := filepath.Join(t.TempDir(), "tick")
	if err := os.WriteFile(tick, []byte("#!/bin/sh\nfor i in 1 2 3; do echo tick$i; sleep 1; done; echo rsh-done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := shoalCLI(t, c, 0, "run", "-n", "1", "--mpi", "none", "--", testcluster.BuildShoal(t), "rsh", "n0", tick)
	if code != 0 || !strings.Contains(out, "tick1\ntick2\ntick3\nrsh-done") {
		t.Fatalf("a 3-second streamed job with 1s request and idle timeouts: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// A write that waits for a leader longer than the request timeout allows
// is answered within that timeout, 503 saying why: the connection's
// deadline would otherwise pass first, and an answer written after it
// reaches nobody (the client sees its TLS connection end with a record it
// cannot authenticate, "bad record MAC", not an HTTP status).
func TestWriteLongerThanRequestTimeoutAnswers503(t *testing.T) {
	t.Parallel()
	const requestTimeout = 3 * time.Second
	// One voter of three expected: no leader, ever.
	c := testcluster.New(t, 3, testcluster.Options{Twins: true, Later: 2, Configure: func(_ int, cfg *agent.Config) {
		cfg.HTTP.RequestTimeout = requestTimeout
		cfg.WriteTimeout = 6 * requestTimeout
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Client(0).Apply(ctx, submitCmd(t, "no-leader-yet"))
	var se *api.StatusError
	if !asStatus(err, &se) || se.Code != http.StatusServiceUnavailable {
		t.Fatalf("write without a leader: %v, want a 503 within the request timeout", err)
	}
}
