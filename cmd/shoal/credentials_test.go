package main

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-hpc/shoal/tlsca"
)

// listener is an HTTPS server of somebody else's that records what the
// CLI sends it: the Authorization header and the client certificate.
type listener struct {
	srv    *httptest.Server
	caFile string // its certificate, which verifies it (--ca-file)

	mu    sync.Mutex
	calls int
	auth  []string
	certs []string // common names of the client certificates presented
}

func newListener(t *testing.T) *listener {
	t.Helper()
	l := &listener{}
	l.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.calls++
		if a := r.Header.Get("Authorization"); a != "" {
			l.auth = append(l.auth, a)
		}
		for _, c := range r.TLS.PeerCertificates {
			l.certs = append(l.certs, c.Subject.CommonName+" by "+c.Issuer.CommonName)
		}
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	l.srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS13}
	l.srv.StartTLS()
	t.Cleanup(l.srv.Close)
	l.caFile = filepath.Join(t.TempDir(), "their-ca.pem")
	if err := os.WriteFile(l.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *listener) seen() (calls int, auth, certs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls, append([]string(nil), l.auth...), append([]string(nil), l.certs...)
}

// writeToken writes a cluster token to a file of mode 0600, as an
// administrator keeps it.
func writeToken(t *testing.T, tok string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestScriptCannotRedirectTheSubmitter is the attack of a user who hands
// root (or a portal holding the token) a batch script whose directives
// point the CLI at the user's own HTTPS listener and name the token file:
// root's `shoal submit job.sh` used to connect there and send the token.
// A connection or credential flag in a script is now an error naming its
// line, exit 2, and nothing reaches either server.
func TestScriptCannotRedirectTheSubmitter(t *testing.T) {
	theirs, agent := newListener(t), newListener(t)
	tokFile := writeToken(t, testToken)
	dir := t.TempDir()
	for _, tc := range []struct{ name, directive, flag string }{
		{"addr and token file", "#SHOAL --addr " + theirs.srv.URL + " --ca-file " + theirs.caFile + " --token-file " + tokFile, "--addr"},
		{"token file alone", "#SHOAL --token-file=" + tokFile, "--token-file"},
		{"token", "#SHOAL --token " + testToken, "--token"},
		{"ca file", "#SHOAL --ca-file " + theirs.caFile, "--ca-file"},
		{"cert and key", "#SHOAL --cert-file /tmp/c.pem --key-file /tmp/k.pem", "--cert-file"},
		{"key file", "#SHOAL --key-file /tmp/k.pem", "--key-file"},
		// The Slurm dialect goes through the same list.
		{"#SBATCH addr", "#SBATCH --addr=" + theirs.srv.URL, "--addr"},
		{"#SBATCH token file", "#SBATCH -n 1 --token-file " + tokFile, "--token-file"},
		{"#SBATCH ca file", "#SBATCH --ca-file=" + theirs.caFile, "--ca-file"},
	} {
		script := filepath.Join(dir, "job.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\n#SHOAL -n 1\n"+tc.directive+"\nhostname\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := shoal(t, map[string]string{"SHOAL_ADDR": agent.srv.URL, "SHOAL_CA_FILE": agent.caFile,
			"SHOAL_TOKEN_FILE": "", "SHOAL_TOKEN": "", "SHOAL_CERT_FILE": "", "SHOAL_KEY_FILE": ""}, "submit", script)
		if code != exitUsage || !strings.Contains(errOut, script+":3: "+tc.flag+" is a connection or credential flag") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d naming %s:3 and %s", tc.name, code, errOut, exitUsage, script, tc.flag)
		}
		oneLine(t, tc.name, errOut)
	}
	for name, l := range map[string]*listener{"the script author's listener": theirs, "the agent": agent} {
		if calls, auth, _ := l.seen(); calls != 0 {
			t.Errorf("%s got %d requests (Authorization %q); want none: nothing is submitted", name, calls, auth)
		}
	}
}

// TestCLINeverSendsTheTokenAsBearer: whatever server the CLI is pointed
// at, even one verified by a CA file the caller chose, the token never
// leaves in a header; the CLI proves it with a client certificate minted
// from the token's CA instead.
func TestCLINeverSendsTheTokenAsBearer(t *testing.T) {
	theirs := newListener(t)
	tokFile := writeToken(t, testToken)
	derived, err := tlsca.DeriveCA(testToken)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"members", "--json"}, {"jobs", "--json"}, {"logs", "1"}} {
		shoal(t, map[string]string{"SHOAL_ADDR": theirs.srv.URL, "SHOAL_CA_FILE": theirs.caFile, "SHOAL_TOKEN_FILE": tokFile,
			"SHOAL_TOKEN": "", "SHOAL_CERT_FILE": "", "SHOAL_KEY_FILE": ""}, cmd...)
	}
	calls, auth, certs := theirs.seen()
	if calls == 0 {
		t.Fatal("the CLI never reached the listener: the test proves nothing")
	}
	for _, a := range auth {
		if strings.Contains(a, testToken) || strings.HasPrefix(a, "Bearer ") {
			t.Errorf("the listener got Authorization %q: the token left the CLI", a)
		}
	}
	want := "shoal-cli by " + derived.Cert.Subject.CommonName
	if len(certs) == 0 || certs[0] != want {
		t.Errorf("client certificates presented: %q; want %q (minted from the token's CA)", certs, want)
	}
}
