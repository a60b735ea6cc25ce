package raftfsm

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every handler writes a job through setJob or deleteJob, which keep the
// job index (jobindex.go): a command that wrote s.Jobs itself would leave
// the index behind on the nodes that had built it and not on those that
// restored a snapshot since, and the two would prune finished jobs
// differently. The random logs check the index after each command they
// draw; this catches a new command they do not draw yet.
func TestHandlersWriteJobsThroughTheIndex(t *testing.T) {
	t.Parallel()
	direct := regexp.MustCompile(`\bs\.Jobs\[[^\]]+\]\s*=[^=]|\bdelete\(s\.Jobs,`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "jobindex.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if direct.MatchString(line) {
				t.Errorf("%s:%d writes s.Jobs directly; use s.setJob or s.deleteJob: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
