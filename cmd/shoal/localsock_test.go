package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// listenAt makes a listening Unix socket at path, closed when the test ends.
func listenAt(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// TestLocalSocketOnlyInRootsDirectories: the CLI sends a user's job, its
// environment included, to the socket it finds, so it takes one only from
// a directory that no one but root can change; a socket another user
// could have put there, or a symlink to one, is passed over.
func TestLocalSocketOnlyInRootsDirectories(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a directory only root may change")
	}
	// /run is root's and 0755 on every systemd host; a fresh directory in
	// it stands for the package's /run/shoal.
	good, err := os.MkdirTemp("/run", "shoal-socktest-")
	if err != nil {
		t.Skipf("no root-only directory to test in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(good) })
	if err := os.Chmod(good, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(good, "shoal.sock")
	listenAt(t, sock)

	open := t.TempDir() // under /tmp: anyone may create names there
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(open, "shoal.sock")
	listenAt(t, planted)
	link := filepath.Join(good, "link.sock")
	if err := os.Symlink(planted, link); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(good, "file.sock")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	groupWritable := filepath.Join(good, "gw")
	if err := os.Mkdir(groupWritable, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(groupWritable, 0o775); err != nil {
		t.Fatal(err)
	}
	listenAt(t, filepath.Join(groupWritable, "shoal.sock"))

	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"root's directory", []string{sock}, sock},
		{"first that exists", []string{filepath.Join(good, "missing.sock"), sock}, sock},
		{"world-writable directory", []string{planted}, ""},
		{"symlink to a planted socket", []string{link}, ""},
		{"not a socket", []string{regular}, ""},
		{"group-writable directory", []string{filepath.Join(groupWritable, "shoal.sock")}, ""},
		{"passed over, then root's", []string{planted, link, sock}, sock},
	}
	for _, tt := range tests {
		got, ok := localSocket(tt.candidates)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: localSocket = %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}
