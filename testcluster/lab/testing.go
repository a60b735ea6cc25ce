package lab

import (
	"testing"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// UpForTest brings a lab up for a test: it skips t (one line) when the host
// cannot run a testbed, fails t if Up fails, logs to t, keeps everything in
// t.TempDir() and closes the lab in t.Cleanup. When the test failed, the
// tail of every agent's log goes to t.Log first.
func UpForTest(t testing.TB, topo netns.Topology, opts Options) *Lab {
	t.Helper()
	netns.SkipIfUnavailable(t)
	if opts.Logger == nil {
		opts.Logger = netns.UpForTestLogger(t)
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	l, err := Up(t.Context(), topo, opts)
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range l.Nodes() {
				t.Logf("agent log of %s: %s", n, l.AgentLog(n))
			}
		}
		if err := l.Close(); err != nil {
			t.Errorf("lab close: %v", err)
		}
	})
	return l
}
