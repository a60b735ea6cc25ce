package agent_test

import (
	"slices"
	"testing"
	"time"
)

// A follower learns that an entry committed from the leader's next
// append, which when nothing else is written comes only after raft's
// commit timeout (randomised up to twice it). Every entry a follower acts
// on waits for it (a host's placement, a head's start), so the agent's
// default keeps it well under raft's own 50 ms, at which a follower
// applied a lone entry a median ~70 ms after its commit.
func TestFollowerAppliesALoneEntrySoon(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	leader := c.Leader()
	follower := (leader + 1) % 3
	lr, fr := c.Agent(leader).Raft(), c.Agent(follower).Raft()
	var lags []time.Duration
	for range 15 {
		// A barrier is an entry of its own that nothing follows: the
		// leader has applied it, and so committed it, when it returns.
		if err := lr.Barrier(10 * time.Second).Error(); err != nil {
			t.Fatalf("barrier on the leader: %v", err)
		}
		idx, t0 := lr.AppliedIndex(), time.Now()
		// Polled: raft signals nothing when a follower applies a barrier,
		// and the poll's 200µs is far below what this measures.
		for fr.AppliedIndex() < idx {
			if time.Since(t0) > 10*time.Second {
				t.Fatalf("the follower never applied index %d (at %d)", idx, fr.AppliedIndex())
			}
			time.Sleep(200 * time.Microsecond)
		}
		lags = append(lags, time.Since(t0))
	}
	slices.Sort(lags)
	// 10 ms gives 10-20 ms; raft's default of 50 ms gave 50-100. The
	// median leaves room for a loaded machine's scheduling.
	t.Logf("follower apply lags: %v", lags)
	if m := lags[len(lags)/2]; m > 40*time.Millisecond {
		t.Errorf("a follower applied a committed entry a median %v after the leader (all: %v); want under 40ms", m, lags)
	}
}
