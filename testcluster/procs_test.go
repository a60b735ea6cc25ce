package testcluster

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartProcsFreshToken: a cluster of processes started without a token
// (the demo) gets a fresh random one in a file only its user may read, not
// the constant every reader of the source knows; an old token file, however
// loose its mode, is replaced.
func TestStartProcsFreshToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// An old token file with a loose mode, as a previous run or another
	// user might have left it.
	const stale = "old-token-of-an-earlier-run"
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(stale+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() (string, os.FileMode) {
		t.Helper()
		p, err := StartProcs(ProcOptions{Bin: "/bin/true", N: 1, Dir: dir, BasePort: freeBase(t)})
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p.TokenFile)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p.TokenFile)
		if err != nil {
			t.Fatal(err)
		}
		tok := strings.TrimSpace(string(b))
		if tok != p.Token {
			t.Fatalf("token file holds %q, cluster uses %q", tok, p.Token)
		}
		return tok, st.Mode().Perm()
	}
	first, mode := read()
	if first == stale || len(first) < 32 {
		t.Fatalf("demo token %q: want a fresh random token, not the old file's", first)
	}
	if mode != 0o600 {
		t.Fatalf("token file mode %v, want 0600", mode)
	}
	if second, _ := read(); second == first {
		t.Fatalf("two clusters got the same token %q", first)
	}
}

// freeBase finds a port the kernel says is free; StartProcs checks the
// three it uses.
func freeBase(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
