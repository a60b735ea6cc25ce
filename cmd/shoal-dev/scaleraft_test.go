package main

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestLeaderRPCCounter checks the counting transport: the leader of 3
// voters and 2 non-voters heartbeats its 4 followers and sends each the
// commit index on the pipeline (each every 50-100 ms: about 107/s in
// all), and a proposal adds to the count on top of that.
func TestLeaderRPCCounter(t *testing.T) {
	t.Parallel()
	names := []string{"s0", "s1", "s2", "s3", "s4"}
	c, err := startRaftCluster(names, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.shutdown()
	if _, err := c.waitReady(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	l := c.leader()
	hb0 := c.servers[l].direct.Load()
	rate, elections, err := c.leaderRPCRate(2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hb := c.servers[l].direct.Load() - hb0; hb < 4 {
		t.Errorf("%d heartbeats counted in 2 s to 4 followers", hb)
	}
	t.Logf("leader of 5 sends %.0f RPCs/s (%d elections)", rate, elections)
	// A loaded machine delays timers, so the lower bound is wide; a
	// counter that counts the followers' answers too, or every RPC twice,
	// passes the upper one (4 x 2 x 20/s at most).
	if rate < 20 || rate > 180 {
		t.Errorf("leader RPC rate %.1f/s, want about 4 followers x 27/s", rate)
	}
	before := c.servers[l].rpcs.Load()
	for k := range 5 {
		if _, err := c.apply(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: uint64(k + 1), Reason: "x"}); err == nil {
			t.Fatalf("set_wait_reason on a missing job was taken")
		}
	}
	if got := c.servers[l].rpcs.Load() - before; got < 5*4 {
		t.Errorf("5 proposals replicated to 4 followers counted %d RPCs, want >= 20", got)
	}
	// Followers apply once the next append brings them the commit index.
	want, deadline := c.servers[l].fsm.Index(), time.Now().Add(30*time.Second)
	for _, s := range c.servers {
		for s.fsm.Index() < want {
			if time.Now().After(deadline) {
				t.Fatalf("server %s applied up to %d, the leader %d", s.name, s.fsm.Index(), want)
			}
			time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
		}
	}
}
