package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkDir: -keep names a directory to create and keep; one that
// exists is refused (two runs' logs would mix), and without -keep the run
// gets a temporary directory of its own.
func TestWorkDir(t *testing.T) {
	t.Parallel()
	keep := filepath.Join(t.TempDir(), "run1")
	got, err := workDir(keep)
	if err != nil || got != keep {
		t.Fatalf("workDir(%q) = %q, %v; want it created", keep, got, err)
	}
	if fi, err := os.Stat(keep); err != nil || !fi.IsDir() {
		t.Fatalf("%s not created: %v", keep, err)
	}
	if _, err := workDir(keep); err == nil || !strings.Contains(err.Error(), "-keep") {
		t.Fatalf("workDir of an existing directory: err %v, want one naming -keep", err)
	}
	tmp, err := workDir("")
	if err != nil || !strings.Contains(filepath.Base(tmp), "shoal-experiment-") {
		t.Fatalf("workDir(\"\") = %q, %v; want a temporary directory", tmp, err)
	}
	_ = os.RemoveAll(tmp)
}
