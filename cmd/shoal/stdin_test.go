package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFileHasInput: shoal run forwards a standard input that may hold
// bytes and leaves the launcher on the null device otherwise, so MPICH's
// mpiexec never gets a late end of file after its proxies ended.
func TestFileHasInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func(name, content string) *os.File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	closed := open("closed", "x")
	closed.Close()
	for _, tc := range []struct {
		name string
		f    *os.File
		want bool
	}{
		{"null device", null, false},
		{"empty file", open("empty", ""), false},
		{"closed descriptor", closed, false},
		{"file with input", open("input", "line\n"), true},
		{"pipe", r, true},
	} {
		if got := fileHasInput(tc.f); got != tc.want {
			t.Errorf("%s: fileHasInput = %v, want %v", tc.name, got, tc.want)
		}
	}
}
