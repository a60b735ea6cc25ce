package agent_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/tlsca"
)

// TestAPI_TLSAndAuth: the API speaks only TLS; a caller needs a client
// certificate of the cluster's CA or the token (inside TLS). Plain HTTP,
// a certificate of another CA, and neither get no data; a client of
// another cluster refuses the agent's certificate.
func TestAPI_TLSAndAuth(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 1, testcluster.Options{})
	ctx := context.Background()
	base := c.Client(0).Base
	paths := []string{"/v1/nodes", "/v1/self", "/v1/members", "/v1/leader", "/v1/state"}

	t.Run("token inside TLS", func(t *testing.T) {
		if _, err := c.Client(0).Nodes(ctx); err != nil {
			t.Errorf("nodes with the right token: %v", err)
		}
	})
	t.Run("client certificate of the cluster CA", func(t *testing.T) {
		if _, err := api.NewTLSClient(base, "", testcluster.CertTLS(c.Token())).Nodes(ctx); err != nil {
			t.Errorf("nodes with a certificate of the cluster's CA: %v", err)
		}
	})
	t.Run("neither certificate nor token", func(t *testing.T) {
		for _, tok := range []string{"", "wrong-token-wrong-token"} {
			cl := api.NewTLSClient(base, tok, testcluster.ClientTLS(c.Token()))
			for _, path := range paths {
				if err := cl.Do(ctx, http.MethodGet, path, nil, nil); !errors.Is(err, api.ErrUnauthorized) {
					t.Errorf("GET %s with token %q: %v, want 401", path, tok, err)
				}
			}
			if _, err := cl.Apply(ctx, []byte(`{}`)); !errors.Is(err, api.ErrUnauthorized) {
				t.Errorf("POST /v1/apply with token %q: %v, want 401", tok, err)
			}
			if h, err := cl.Health(ctx); err != nil || h.Status != "ok" {
				t.Errorf("health without token: %+v, %v", h, err)
			}
		}
	})
	t.Run("certificate of another CA", func(t *testing.T) {
		// It trusts our CA (public) but its own certificate is another
		// cluster's: the handshake itself fails, no request is served. A
		// 401 would mean the server took the certificate and only the
		// missing token stopped the call.
		other, _ := tlsca.DeriveCA("another-cluster-token-0123456789")
		leaf, _ := other.Issue(tlsca.LeafRequest{Name: "intruder", TTL: time.Hour}, time.Now())
		ours, _ := tlsca.DeriveCA(c.Token())
		cl := api.NewTLSClient(base, "", tlsca.ClientConfig(tlsca.Pool(ours.Cert), tlsca.FixedLeaf(leaf), ""))
		var nodes []api.Node
		err := cl.Do(ctx, http.MethodGet, "/v1/nodes", nil, &nodes)
		var se *api.StatusError
		if err == nil || len(nodes) > 0 || errors.Is(err, api.ErrUnauthorized) || errors.As(err, &se) {
			t.Fatalf("a certificate of another CA got an HTTP answer (%d nodes, err %v), want the handshake refused", len(nodes), err)
		}
	})
	t.Run("agent of another cluster", func(t *testing.T) {
		// A client of another cluster refuses this agent's certificate,
		// and so never sends its token.
		cl := api.NewTLSClient(base, "another-cluster-token-0123456789", testcluster.ClientTLS("another-cluster-token-0123456789"))
		_, err := cl.Nodes(ctx)
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("client of another cluster: %v, want a certificate error", err)
		}
	})
	t.Run("raft from a process without the CA", func(t *testing.T) {
		addr := "127.0.0.1:" + strconv.Itoa(c.Agent(0).RaftPort())
		ours, _ := tlsca.DeriveCA(c.Token())
		other, _ := tlsca.DeriveCA("another-cluster-token-0123456789")
		leaf, _ := other.Issue(tlsca.AgentRequest("intruder", "", time.Hour), time.Now())
		for name, cfg := range map[string]*tls.Config{
			"no certificate":           tlsca.ClientConfig(tlsca.Pool(ours.Cert), nil, tlsca.AgentServerName),
			"another CA's certificate": tlsca.ClientConfig(tlsca.Pool(ours.Cert), tlsca.FixedLeaf(leaf), tlsca.AgentServerName),
		} {
			conn, err := tls.Dial("tcp", addr, cfg)
			if err != nil {
				continue // refused in the handshake
			}
			// TLS 1.3 clients finish before the server checks their
			// certificate: the refusal shows on the first read.
			conn.Write([]byte{0}) // raft's AppendEntries RPC type
			conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			n, err := conn.Read(make([]byte, 1))
			var ne net.Error
			if err == nil || n > 0 || errors.As(err, &ne) && ne.Timeout() {
				t.Errorf("raft with %s: read %d bytes, err %v; want the connection refused", name, n, err)
			}
			conn.Close()
		}
		if _, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
			t.Fatalf("raft port not listening: %v", err)
		}
	})
	t.Run("plain HTTP", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+strings.TrimPrefix(base, "https://")+"/v1/nodes", nil)
		req.Header.Set("Authorization", "Bearer "+c.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // refused outright: fine
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(b), `"name"`) {
			t.Fatalf("plain HTTP got %d %q, want 400 from TLS and no data", resp.StatusCode, b)
		}
	})
}

// TestLeafRenewedWhileRunning: an agent's own certificate is renewed
// before it expires, so a cluster running longer than a leaf's life keeps
// taking new connections (here a 3 s leaf, renewed at half-life).
func TestLeafRenewedWhileRunning(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 2, testcluster.Options{BootstrapExpect: 2, Configure: func(_ int, cfg *agent.Config) {
		cfg.LeafTTL = 3 * time.Second
	}})
	c.WaitLeader(45 * time.Second)
	served := func() *x509.Certificate {
		conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(c.Agent(0).HTTPPort()), testcluster.CertTLS(c.Token()))
		if err != nil {
			t.Fatalf("TLS to the agent: %v", err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	first := served()
	if life := time.Until(first.NotAfter); life > 3*time.Second {
		t.Fatalf("leaf valid for %v more, want at most the 3 s LeafTTL", life)
	}
	testcluster.WaitFor(t, 10*time.Second, "the agent to serve a renewed leaf", func() bool {
		return served().NotAfter.After(first.NotAfter)
	})
	// Past the first leaf's expiry: new connections, between agents too.
	testcluster.WaitFor(t, 10*time.Second, "the first leaf to expire", func() bool { return time.Now().After(first.NotAfter) })
	for i := range 2 {
		cl := api.NewTLSClient(c.Client(i).Base, "", testcluster.CertTLS(c.Token()))
		cl.HTTP.Transport.(*http.Transport).DisableKeepAlives = true
		if _, err := cl.Submit(t.Context(), api.SubmitRequest{RequestID: "after-expiry-" + c.Name(i), Owner: "root",
			Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: os.TempDir(), Oversubscribe: true}}); err != nil {
			t.Fatalf("write through %s after the first leaf expired: %v", c.Name(i), err)
		}
		if _, err := cl.Members(t.Context()); err != nil {
			t.Fatalf("read through %s after the first leaf expired: %v", c.Name(i), err)
		}
	}
}
