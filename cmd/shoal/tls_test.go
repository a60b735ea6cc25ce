package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/tlsca"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func writeTLSPair(t *testing.T, dir, name string, ca *tlsca.CA, now time.Time, ttl time.Duration) (string, string) {
	t.Helper()
	leaf, err := ca.Issue(tlsca.AgentRequest(name, "", ttl), now)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := tlsca.KeyPEM(leaf.PrivateKey)
	c, kf := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	os.WriteFile(c, tlsca.CertPEM(leaf.Leaf), 0o644)
	os.WriteFile(kf, k, 0o600)
	return c, kf
}

// TestAgentTLSFileErrors: a wrong --tls-* file, a key that does not match
// its certificate, an expired or not-yet-valid certificate, or one another
// CA signed: each is one line at start, exit 1, and no port stays bound.
func TestAgentTLSFileErrors(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte(testcluster.NewToken(t)+"\n"), 0o600)
	site, _ := tlsca.NewCA("site CA", time.Now(), 24*time.Hour)
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, tlsca.CertPEM(site.Cert), 0o644)
	now := time.Now()
	good, goodKey := writeTLSPair(t, dir, "good", site, now, time.Hour)
	_, otherKey := writeTLSPair(t, dir, "other", site, now, time.Hour)
	expired, expiredKey := writeTLSPair(t, dir, "expired", site, now.Add(-3*time.Hour), time.Hour)
	future, futureKey := writeTLSPair(t, dir, "future", site, now.Add(3*time.Hour), time.Hour)
	stranger, _ := tlsca.NewCA("stranger CA", now, 24*time.Hour)
	foreign, foreignKey := writeTLSPair(t, dir, "foreign", stranger, now, time.Hour)
	// A certificate of the right CA without the name agents check.
	bare, _ := site.Issue(tlsca.LeafRequest{Name: "bare", TTL: time.Hour}, now)
	bareKey, _ := tlsca.KeyPEM(bare.PrivateKey)
	bareCert, bareKeyFile := filepath.Join(dir, "bare.pem"), filepath.Join(dir, "bare-key.pem")
	os.WriteFile(bareCert, tlsca.CertPEM(bare.Leaf), 0o644)
	os.WriteFile(bareKeyFile, bareKey, 0o600)
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate"), 0o644)

	cases := []struct {
		name, want string
		flags      []string
	}{
		{"CA file missing", "read CA file", []string{"--tls-ca-file", filepath.Join(dir, "nope.pem"), "--tls-cert-file", good, "--tls-key-file", goodKey}},
		{"CA file not PEM", "no PEM certificate", []string{"--tls-ca-file", junk, "--tls-cert-file", good, "--tls-key-file", goodKey}},
		{"a node certificate as CA", "not a CA certificate", []string{"--tls-ca-file", good, "--tls-cert-file", good, "--tls-key-file", goodKey}},
		{"key of another certificate", "does not match", []string{"--tls-ca-file", caFile, "--tls-cert-file", good, "--tls-key-file", otherKey}},
		{"cert without key", "go together", []string{"--tls-ca-file", caFile, "--tls-cert-file", good}},
		{"expired certificate", "expired", []string{"--tls-ca-file", caFile, "--tls-cert-file", expired, "--tls-key-file", expiredKey}},
		{"not yet valid certificate", "not valid yet", []string{"--tls-ca-file", caFile, "--tls-cert-file", future, "--tls-key-file", futureKey}},
		{"certificate of another CA", "does not verify against the trusted CAs", []string{"--tls-ca-file", caFile, "--tls-cert-file", foreign, "--tls-key-file", foreignKey}},
		{"certificate without agent.shoal", "lacks the name agent.shoal", []string{"--tls-ca-file", caFile, "--tls-cert-file", bareCert, "--tls-key-file", bareKeyFile}},
		{"site certificate, derived CA trusted", "does not verify against the trusted CAs", []string{"--tls-cert-file", good, "--tls-key-file", goodKey}},
	}
	for _, tc := range cases {
		port := freePort(t)
		args := append([]string{"agent", "--name", "n1", "--bind", "127.0.0.1", "--data-dir", filepath.Join(dir, "data-"+strconv.Itoa(port)),
			"--token-file", tok, "--http-port", strconv.Itoa(port), "--raft-port", "0", "--gossip-port", "0", "--socket", "none"}, tc.flags...)
		_, errOut, code := shoal(t, nil, args...)
		if code != exitFailure || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", tc.name, code, errOut, tc.want)
		}
		oneLine(t, tc.name, errOut)
		// Nothing half up: the API port is free again.
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
			t.Errorf("%s: the API port is still bound: %v", tc.name, err)
		} else {
			ln.Close()
		}
	}
}

// TestCLI_SitePKI: against agents with a site CA, the CLI verifies them
// with --ca-file and authenticates with --cert-file/--key-file, or with the
// token inside TLS; without --ca-file it refuses their certificates.
func TestCLI_SitePKI(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	site, _ := tlsca.NewCA("site CA", now, 24*time.Hour)
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, tlsca.CertPEM(site.Cert), 0o644)
	c := testcluster.New(t, 1, testcluster.Options{BootstrapExpect: 1, Configure: func(i int, cfg *agent.Config) {
		cert, key := writeTLSPair(t, dir, cfg.Name, site, now, time.Hour)
		cfg.TLS = agent.TLSFiles{CAFile: caFile, CertFile: cert, KeyFile: key}
	}})
	c.WaitLeader(45 * time.Second)
	admin, adminKey := writeTLSPair(t, dir, "admin", site, now, time.Hour)
	addr := c.Client(0).Base
	for name, env := range map[string]map[string]string{
		"client certificate": {"SHOAL_ADDR": addr, "SHOAL_CA_FILE": caFile, "SHOAL_CERT_FILE": admin, "SHOAL_KEY_FILE": adminKey, "SHOAL_TOKEN": ""},
		"token inside TLS":   {"SHOAL_ADDR": addr, "SHOAL_CA_FILE": caFile, "SHOAL_TOKEN": c.Token()},
	} {
		out, errOut, code := shoal(t, env, "members", "--json")
		if code != exitOK || !strings.Contains(out, `"n0"`) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
	_, errOut, code := shoal(t, map[string]string{"SHOAL_ADDR": addr, "SHOAL_CA_FILE": "", "SHOAL_TOKEN": c.Token()}, "members")
	if code != exitFailure || !strings.Contains(errOut, "not signed by this cluster's CA") {
		t.Errorf("without --ca-file: exit %d, stderr %q; want the agent's certificate refused", code, errOut)
	}
	oneLine(t, "without --ca-file", errOut)
}
