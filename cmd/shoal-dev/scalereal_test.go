package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestScaleRealRunsAgents runs the real mode small, through the whole
// measurement, and checks what the mode promises: that what it measured
// were whole agents, every one of them in, and that the jobs it timed
// reached their hosts. Each agent answers its own API as the node it was
// started as; at the end every agent names one raft leader and its copy
// of the state holds that leader's; and each job timed is in the leader's
// list, placed by the leader core as its spec asks (4 hosts of 40
// processes), on agents of this run whose own copies hold the attempt.
func TestScaleRealRunsAgents(t *testing.T) {
	t.Parallel()
	o := scaleOpts{N: 8, Rounds: 3, Window: time.Second, Seed: 3, Config: scaleConfig(), Servers: 5, Jobs: 2,
		QuietTimeout: 20 * time.Second, PaceLate: 20 * time.Millisecond, PaceOwed: 12000, PaceRate: 24000,
		Real: true, Bin: testcluster.BuildShoal(t)}
	spec := realJobSpec()
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
		// Waited for, not read once: a loaded machine may have held an
		// election since the jobs ran, and a client hears of its winner
		// through gossip. The bound is for a machine at load 4 and more;
		// an idle one settles in well under a second.
		l, err := c.waitRaft(min(o.Servers, o.N), 60*time.Second)
		if err != nil {
			return fmt.Errorf("every agent at one leader's state: %w", err)
		}
		jobs, err := c.client(l).Jobs(ctx)
		if err != nil {
			return fmt.Errorf("the leader's job list: %w", err)
		}
		reached := 0
		for _, j := range jobs {
			if len(j.Attempts) == 0 {
				return fmt.Errorf("job %d has no attempt: it was never placed", j.ID)
			}
			a := j.Attempts[len(j.Attempts)-1]
			if len(a.Hosts) != spec.NP/spec.PPN {
				return fmt.Errorf("job %d placed on %d hosts, want %d: %+v", j.ID, len(a.Hosts), spec.NP/spec.PPN, a.Hosts)
			}
			for _, h := range a.Hosts {
				i := c.Index(h.Node)
				if i < 0 || h.Procs != spec.PPN {
					return fmt.Errorf("job %d: %d processes on %q, want %d on an agent of this run", j.ID, h.Procs, h.Node, spec.PPN)
				}
				held := false
				c.nodes[i].FSM().View(func(s *raftfsm.State) {
					if sj := s.Jobs[j.ID]; sj != nil {
						if sa := sj.Current(); sa != nil && sa.N == a.N && sa.Holds(h.Node) {
							held = true
						}
					}
				})
				if !held {
					return fmt.Errorf("job %d attempt %d: its host %s does not hold it in its own state", j.ID, a.N, h.Node)
				}
			}
			reached++
		}
		if reached != o.Jobs {
			return fmt.Errorf("the leader lists %d jobs that reached their hosts, want the %d timed: %+v", reached, o.Jobs, jobs)
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
