package testcluster

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/tlsca"
)

// ClientTLS is a TLS configuration that verifies the agents of a cluster
// with token against the token's derived CA, presenting no certificate
// (the client sends the token inside TLS).
func ClientTLS(token string) *tls.Config {
	ca, err := tlsca.DeriveCA(token)
	if err != nil {
		panic(err) // a token always derives a CA
	}
	return tlsca.ClientConfig(tlsca.Pool(ca.Cert), nil, "")
}

// CertTLS is ClientTLS presenting a certificate minted from the token's
// CA, as the CLI does, instead of sending the token.
func CertTLS(token string) *tls.Config {
	ca, err := tlsca.DeriveCA(token)
	if err != nil {
		panic(err)
	}
	leaf, err := ca.Issue(tlsca.LeafRequest{Name: "test-client", TTL: time.Hour}, time.Now())
	if err != nil {
		panic(err)
	}
	return tlsca.ClientConfig(tlsca.Pool(ca.Cert), tlsca.FixedLeaf(leaf), "")
}

func tokenClient(base, token string) *api.Client {
	c := api.NewTLSClient(base, token, ClientTLS(token))
	// A write through an agent waits out an election for up to the
	// cluster's WriteTimeout, stretched on a loaded machine: the client
	// gives it longer, or it would give up first.
	c.HTTP.Timeout = max(c.HTTP.Timeout, Stretch(40*time.Second))
	return c
}

// FakeAgent is an HTTPS test server that a CLI holding token accepts as
// one of its cluster's agents: its certificate is issued by the token's
// derived CA. Tests that script an agent's answers use it; it stops when
// the test ends.
func FakeAgent(t testing.TB, token string, h http.Handler) *httptest.Server {
	t.Helper()
	ca, err := tlsca.DeriveCA(token)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(tlsca.AgentRequest("fake-agent", "127.0.0.1", time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// PeerHTTP is an HTTP client that reaches the cluster's agents as another
// agent would: mutual TLS with a certificate of the cluster token's CA.
func (c *Cluster) PeerHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: CertTLS(c.token)}}
}
