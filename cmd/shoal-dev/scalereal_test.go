package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// TestScaleRealRunsAgents runs the real mode small, through the whole
// measurement, and checks that what it measured were whole agents: each
// answers its own API as the node it was started as, and the jobs it
// timed are in the raft leader's job list, placed on hosts by the
// leader core.
func TestScaleRealRunsAgents(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 8, Rounds: 3, Window: time.Second, Seed: 3, Config: scaleConfig(), Servers: 5, Jobs: 2,
		QuietTimeout: 20 * time.Second, PaceLate: 20 * time.Millisecond, PaceOwed: 12000, PaceRate: 24000,
		Real: true, Bin: testcluster.BuildShoal(t)}
	checked := false
	o.check = func(c *realCluster) error {
		checked = true
		ctx := context.Background()
		for i := range c.nodes {
			self, err := c.client(i).Self(ctx)
			if err != nil {
				return fmt.Errorf("agent %d's API: %w", i, err)
			}
			if self.Name != agentName(i) {
				return fmt.Errorf("agent %d's API answers as %q", i, self.Name)
			}
		}
		l, err := c.raftLeader(30 * time.Second)
		if err != nil {
			return err
		}
		jobs, err := c.client(l).Jobs(ctx)
		if err != nil {
			return fmt.Errorf("the leader's job list: %w", err)
		}
		placed := 0
		for _, j := range jobs {
			if len(j.Attempts) > 0 && len(j.Attempts[0].Hosts) == 4 {
				placed++
			}
		}
		if placed != o.Jobs {
			return fmt.Errorf("the leader lists %d jobs placed on 4 hosts, want the %d timed: %+v", placed, o.Jobs, jobs)
		}
		return nil
	}
	r, err := runRealScale(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if !checked {
		t.Fatal("the run never reached its agents' check")
	}
	if r.Mode != "real" || r.MinAlive != o.N {
		t.Errorf("mode %q, some agent sees %d alive: want real, %d", r.Mode, r.MinAlive, o.N)
	}
	if r.ConvP50ms <= 0 || r.ConvMaxms > 10000 {
		t.Errorf("convergence p50 %.1f max %.1f ms: want 0 < p50, max < 10 s", r.ConvP50ms, r.ConvMaxms)
	}
	if r.LeaderRPCs <= 0 || r.RPCPeers != o.Servers-1 {
		t.Errorf("leader %.0f RPCs/s to %d peers: want some, to the %d other servers", r.LeaderRPCs, r.RPCPeers, o.Servers-1)
	}
	if r.Jobs != o.Jobs || r.TotalHosts != 4*o.Jobs || r.AttemptP50ms <= 0 {
		t.Errorf("%d jobs on %d hosts, attempt p50 %.1f ms: want %d jobs on %d hosts", r.Jobs, r.TotalHosts, r.AttemptP50ms, o.Jobs, 4*o.Jobs)
	}
	if r.HeapPerAgent <= 0 || r.Goroutines <= 0 {
		t.Errorf("heap %.0f B and %.1f goroutines an agent: want both counted", r.HeapPerAgent, r.Goroutines)
	}
}
