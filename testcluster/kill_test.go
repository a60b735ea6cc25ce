package testcluster

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent"
)

// fatalRecorder is a testing.TB whose Fatalf records its message and ends
// the goroutine, as the real one ends the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Kill with Leader's -1 (no leader yet) fails the test with a message that
// says to wait for a leader, rather than panicking with an index out of
// range; so does an index past the last node.
func TestKillOutOfRangeFailsClearly(t *testing.T) {
	t.Parallel()
	for _, i := range []int{-1, 3} {
		rec := &fatalRecorder{TB: t}
		c := &Cluster{t: rec, cfgs: make([]agent.Config, 3), agents: make([]*agent.Agent, 3)}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Kill(i)
		}()
		<-done
		if !strings.Contains(rec.msg, fmt.Sprintf("stop node %d", i)) || !strings.Contains(rec.msg, "WaitLeader") {
			t.Errorf("Kill(%d) failed with %q, want a message naming the node and WaitLeader", i, rec.msg)
		}
	}
}
