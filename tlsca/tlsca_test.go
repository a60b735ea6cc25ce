package tlsca

import (
	"bytes"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const tokA, tokB = "token-aaaaaaaaaaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbbbbbbbbbb"

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func mustCA(t *testing.T, tok string) *CA {
	t.Helper()
	ca, err := DeriveCA(tok)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestDeriveCA_SameTokenSameCA(t *testing.T) {
	t.Parallel()
	a1, a2, b := mustCA(t, tokA), mustCA(t, tokA), mustCA(t, tokB)
	if !bytes.Equal(a1.Cert.Raw, a2.Cert.Raw) {
		t.Fatal("the same token derived two different CA certificates")
	}
	if bytes.Equal(a1.Cert.Raw, b.Cert.Raw) || a1.Cert.Equal(b.Cert) {
		t.Fatal("two tokens derived the same CA")
	}
	if !a1.Cert.IsCA || a1.Cert.Subject.CommonName != DerivedCAName {
		t.Fatalf("derived CA template: IsCA=%v CN=%q", a1.Cert.IsCA, a1.Cert.Subject.CommonName)
	}
	if _, err := DeriveCA("short"); err == nil {
		t.Fatal("a 5-character token derived a CA")
	}
}

func TestIssue_LeafVerifiesOnlyAgainstItsCA(t *testing.T) {
	t.Parallel()
	a, b := mustCA(t, tokA), mustCA(t, tokB)
	// A second holder of the token verifies what the first one issued.
	leaf, err := a.Issue(AgentRequest("node1", "10.0.0.7", time.Hour), t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(leaf.Leaf, Pool(mustCA(t, tokA).Cert), t0); err != nil {
		t.Fatalf("leaf does not verify against its CA: %v", err)
	}
	if err := Verify(leaf.Leaf, Pool(b.Cert), t0); err == nil {
		t.Fatal("leaf verified against another cluster's CA")
	}
	for _, name := range []string{"node1", AgentServerName, "localhost", "127.0.0.1", "10.0.0.7"} {
		if err := leaf.Leaf.VerifyHostname(name); err != nil {
			t.Errorf("leaf lacks SAN %s: %v", name, err)
		}
	}
}

func TestVerify_RejectsExpiredAndNotYetValid(t *testing.T) {
	t.Parallel()
	a := mustCA(t, tokA)
	leaf, err := a.Issue(LeafRequest{Name: "n", TTL: time.Hour}, t0)
	if err != nil {
		t.Fatal(err)
	}
	roots := Pool(a.Cert)
	if err := Verify(leaf.Leaf, roots, t0.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired leaf: err = %v", err)
	}
	if err := Verify(leaf.Leaf, roots, t0.Add(-time.Hour)); err == nil || !strings.Contains(err.Error(), "not valid yet") {
		t.Fatalf("not-yet-valid leaf: err = %v", err)
	}
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeLeaf(t *testing.T, dir, name string, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	k, err := KeyPEM(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name+".pem", CertPEM(c.Leaf)), writeFile(t, dir, name+"-key.pem", k)
}

func TestLoadKeyPair_RefusesMismatchedKeyAndExpiry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := mustCA(t, tokA)
	l1, _ := a.Issue(LeafRequest{Name: "one", TTL: time.Hour}, t0)
	l2, _ := a.Issue(LeafRequest{Name: "two", TTL: time.Hour}, t0)
	c1, k1 := writeLeaf(t, dir, "one", l1)
	_, k2 := writeLeaf(t, dir, "two", l2)
	if _, err := LoadKeyPair(c1, k1, t0); err != nil {
		t.Fatalf("matching pair refused: %v", err)
	}
	if _, err := LoadKeyPair(c1, k2, t0); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatched key: err = %v", err)
	}
	if _, err := LoadKeyPair(c1, k1, t0.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired certificate: err = %v", err)
	}
	if _, err := LoadKeyPair(c1, filepath.Join(dir, "missing"), t0); err == nil {
		t.Fatal("missing key file accepted")
	}
}

func TestLoadCAFile_BundleAndRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := mustCA(t, tokA), mustCA(t, tokB)
	bundle := writeFile(t, dir, "both.pem", append(CertPEM(a.Cert), CertPEM(b.Cert)...))
	certs, err := LoadCAFile(bundle, t0)
	if err != nil || len(certs) != 2 {
		t.Fatalf("bundle: %d certs, err %v", len(certs), err)
	}
	leaf, _ := a.Issue(LeafRequest{Name: "n"}, t0)
	notCA := writeFile(t, dir, "leaf.pem", CertPEM(leaf.Leaf))
	if _, err := LoadCAFile(notCA, t0); err == nil || !strings.Contains(err.Error(), "not a CA") {
		t.Fatalf("leaf as CA file: err = %v", err)
	}
	junk := writeFile(t, dir, "junk.pem", []byte("hello"))
	if _, err := LoadCAFile(junk, t0); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("junk CA file: err = %v", err)
	}
	short, _ := NewCA("short-lived", t0, time.Hour)
	expired := writeFile(t, dir, "expired.pem", CertPEM(short.Cert))
	if _, err := LoadCAFile(expired, t0.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired CA: err = %v", err)
	}
}

func TestLeaf_RenewsAfterHalfItsLife(t *testing.T) {
	t.Parallel()
	now := t0
	l, err := IssuedLeaf(mustCA(t, tokA), LeafRequest{Name: "n", TTL: time.Hour}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	first, _ := l.Get()
	now = now.Add(29 * time.Minute)
	if c, _ := l.Get(); c != first {
		t.Fatal("renewed before half its life")
	}
	now = now.Add(2 * time.Minute)
	c, _ := l.Get()
	if c == first || !c.Leaf.NotAfter.After(first.Leaf.NotAfter) {
		t.Fatal("not renewed after half its life")
	}
}

// handshake runs a TLS handshake between a server and a client over a
// pipe and returns both sides' errors.
func handshake(srv, cli *tls.Config) (serr, cerr error) {
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- tls.Server(a, srv).Handshake()
		a.Close() // the raw pipe: a TLS close_notify would wait for a reader
	}()
	cerr = tls.Client(b, cli).Handshake()
	b.Close()
	return <-done, cerr
}

func TestMutualTLS_SameClusterOnly(t *testing.T) {
	t.Parallel()
	a, b := mustCA(t, tokA), mustCA(t, tokB)
	la, _ := IssuedLeaf(a, AgentRequest("a", "", 0), time.Now)
	la2, _ := IssuedLeaf(a, AgentRequest("a2", "", 0), time.Now)
	lb, _ := IssuedLeaf(b, AgentRequest("b", "", 0), time.Now)
	srv := ServerConfig(Pool(a.Cert), la, tls.RequireAndVerifyClientCert)
	if serr, cerr := handshake(srv, ClientConfig(Pool(a.Cert), la2, AgentServerName)); serr != nil || cerr != nil {
		t.Fatalf("same cluster: server %v, client %v", serr, cerr)
	}
	if serr, _ := handshake(srv, ClientConfig(Pool(a.Cert), lb, AgentServerName)); serr == nil {
		t.Fatal("server accepted a client certificate of another CA")
	}
	if serr, _ := handshake(srv, ClientConfig(Pool(a.Cert), nil, AgentServerName)); serr == nil {
		t.Fatal("server accepted a client without a certificate")
	}
	if _, cerr := handshake(srv, ClientConfig(Pool(b.Cert), lb, AgentServerName)); cerr == nil {
		t.Fatal("client accepted a server of another cluster")
	}
	// During a rotation both CAs are trusted: either side's leaf passes.
	both := Pool(a.Cert, b.Cert)
	if serr, cerr := handshake(ServerConfig(both, la, tls.RequireAndVerifyClientCert), ClientConfig(both, lb, AgentServerName)); serr != nil || cerr != nil {
		t.Fatalf("two-CA trust: server %v, client %v", serr, cerr)
	}
}

// BenchmarkMutualHandshake is the CPU cost of one TLS 1.3 handshake with
// client certificates, both sides (what a new agent-to-agent connection
// pays; kept-alive connections pay it once).
func BenchmarkMutualHandshake(b *testing.B) {
	ca, _ := DeriveCA(tokA)
	la, _ := IssuedLeaf(ca, AgentRequest("a", "", 0), time.Now)
	lb, _ := IssuedLeaf(ca, AgentRequest("b", "", 0), time.Now)
	srv := ServerConfig(Pool(ca.Cert), la, tls.RequireAndVerifyClientCert)
	cli := ClientConfig(Pool(ca.Cert), lb, AgentServerName)
	for b.Loop() {
		if serr, cerr := handshake(srv, cli); serr != nil || cerr != nil {
			b.Fatal(serr, cerr)
		}
	}
}

// BenchmarkCLIStart is what a CLI holding the token does before its first
// request: derive the CA and mint its client certificate.
func BenchmarkCLIStart(b *testing.B) {
	for b.Loop() {
		ca, err := DeriveCA(tokA)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ca.Issue(LeafRequest{Name: "cli", TTL: time.Hour}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
