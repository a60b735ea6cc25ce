package jobrun_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/jobrun"
)

// TestExecBinOnlyWhereItIsAsSafeAsShoal: jobs start through the
// shoal-exec beside the agent's binary, which runs as root in the job
// helper; one that more users may replace than the binary itself, or
// that is not a program, is passed over for the binary, with the reason.
func TestExecBinOnlyWhereItIsAsSafeAsShoal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "shoal")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, jobrun.ExecBinName)
	check := func(name, want, wantErr string) {
		t.Helper()
		got, err := jobrun.ExecBin(bin)
		if got != want {
			t.Errorf("%s: jobs start through %s, want %s", name, got, want)
		}
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: err %v, want %q", name, err, wantErr)
		}
	}
	check("none beside it", bin, "")
	if got, err := jobrun.ExecBin(""); got != "" || err != nil {
		t.Errorf("no binary configured: %q, %v; want the helper from this process's own executable", got, err)
	}

	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	check("beside it, the same owner and mode", exe, "")

	if err := os.Chmod(exe, 0o775); err != nil {
		t.Fatal(err)
	}
	check("writable by its group", bin, "may be written by more users (mode 0775)")
	if err := os.Chmod(bin, 0o775); err != nil {
		t.Fatal(err)
	}
	check("as writable as the binary", exe, "")

	if err := os.Chmod(exe, 0o644); err != nil {
		t.Fatal(err)
	}
	check("not executable", bin, "not executable")

	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	check("a directory", bin, "not a regular file")

	if os.Geteuid() == 0 {
		if err := os.Remove(exe); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(exe, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		check("another user's", bin, "belongs to uid 65534")
	}
}
