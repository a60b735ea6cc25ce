package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoFixedDemoToken: the demo must not run on a token written in the
// source, where any local user reads it. The demo's token comes from
// testcluster.StartProcs (TestStartProcsFreshToken); this guards against
// the Makefile or shoal-dev passing a constant back in.
func TestNoFixedDemoToken(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../Makefile")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"testcluster-token-", "testcluster.Token", "Token:", "SHOAL_TOKEN="} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s contains %q: the demo must make a fresh token", f, bad)
			}
		}
	}
}
