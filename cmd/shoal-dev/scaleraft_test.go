package main

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestLeaderRPCCounter checks the counting transport: the leader of 3
// voters and 2 non-voters heartbeats its 4 followers (raft sends one every
// HeartbeatTimeout/10 = 50 ms to each, 80/s in all), and a proposal adds
// to the count on top of that.
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
	rate, err := c.leaderRPCRate(2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader of 5 sends %.0f RPCs/s", rate)
	// 80/s when every heartbeat is on time; a loaded machine delays some,
	// and raft's jitter sends some sooner (between HeartbeatTimeout/10 and
	// twice that), so the bounds are wide. A counter that counts nothing,
	// or counts the followers' answers too, falls outside.
	if rate < 20 || rate > 200 {
		t.Errorf("leader RPC rate %.1f/s, want about 4 followers x 20/s", rate)
	}
	l := c.leader()
	before := c.servers[l].rpcs.Load()
	for k := range 5 {
		if _, err := c.apply(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: uint64(k + 1), Reason: "x"}); err == nil {
			t.Fatalf("set_wait_reason on a missing job was taken")
		}
	}
	if got := c.servers[l].rpcs.Load() - before; got < 5*4 {
		t.Errorf("5 proposals replicated to 4 followers counted %d RPCs, want >= 20", got)
	}
	for i, s := range c.servers {
		if i != l && s.fsm.Index() == 0 {
			t.Errorf("server %s applied nothing", s.name)
		}
	}
}
