package main

import (
	"context"
	"testing"
	"time"
)

// TestScaleConvergence runs a small in-memory cluster through the whole
// measurement: every agent gets every state, a timed change reaches all of
// them, bytes are counted and the push/pull sizes grow with the rows.
func TestScaleConvergence(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 6, Rounds: 3, Window: 500 * time.Millisecond, Update: 300 * time.Millisecond, Seed: 7, Config: scaleConfig()}
	o.Config.GossipInterval = 50 * time.Millisecond
	r, err := runScale(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.MinAlive != o.N {
		t.Errorf("some agent sees %d alive, want %d", r.MinAlive, o.N)
	}
	if r.ConvP50ms <= 0 || r.ConvP90ms < r.ConvP50ms || r.ConvMaxms < r.ConvP90ms || r.ConvMaxms > 5000 {
		t.Errorf("convergence p50 %.1f p90 %.1f max %.1f ms: want 0 < p50 <= p90 <= max < 5 s", r.ConvP50ms, r.ConvP90ms, r.ConvMaxms)
	}
	if r.BytesPerNode <= 0 {
		t.Errorf("no gossip bytes counted")
	}
	if r.PushPull < o.N*r.StateBytes/2 || r.PushPullRows <= r.PushPull {
		t.Errorf("push/pull %d bytes (%d with rows) for %d states of %d bytes", r.PushPull, r.PushPullRows, o.N, r.StateBytes)
	}
}

// TestScaleConvergenceWaitsForEveryAgent checks the sweep itself: when
// convergence returns, every agent holds the changed state.
func TestScaleConvergenceWaitsForEveryAgent(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 8, Seed: 3, Config: scaleConfig()}
	c, err := startScaleCluster(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.shutdown()
	if err := c.waitConverged(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	for round, src := range []int{5, 2, 7} {
		users := 500 + round
		if _, err := c.convergence(src, users, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		for i, g := range c.agents {
			if e, ok := g.Lookup(agentName(src)); !ok || e.State.Dyn.Users != users {
				t.Fatalf("round %d: convergence returned while agent %d held users=%d of %s, want %d", round, i, e.State.Dyn.Users, agentName(src), users)
			}
		}
	}
}
