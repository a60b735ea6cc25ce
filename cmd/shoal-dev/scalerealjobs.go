package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// realJobSpec is benchJobSpec through the API: 160 ranks, 40 a node, on
// four of the 40-core nodes; a plain launch (no MPI), as the job is timed
// to its placement on the nodes, not to its run.
func realJobSpec() api.JobSpec {
	return api.JobSpec{Cmd: []string{"true"}, NP: 160, PPN: 40, MPI: "none", Workdir: os.TempDir()}
}

// jobRound submits one job through the leader's API and waits until every
// node the leader placed it on holds the attempt in its own copy of the
// state (a server's raft FSM, a client's replica): what that node's job
// reconciler acts on. The job is then killed so its slots are free for
// the next round.
func (c *realCluster) jobRound(ctx context.Context, k int, timeout time.Duration) (time.Duration, []string, error) {
	// Through the raft leader's own API (any agent forwards a submit to
	// it; asking it saves the hop the re-wired harness does not have),
	// waiting out an election a loaded machine may start. The time starts
	// once a leader is known: an election's wait, which a user's submit
	// would sit through, is not in the figure (the run's line counts the
	// elections).
	l, err := c.raftLeader(timeout)
	if err != nil {
		return 0, nil, fmt.Errorf("job %d: %w", k, err)
	}
	cl := c.client(l)
	t0 := time.Now()
	res, err := cl.Submit(ctx, api.SubmitRequest{RequestID: fmt.Sprintf("bench-scale-%d-%d", t0.UnixNano(), k), Owner: c.owner, Spec: realJobSpec()})
	if err != nil {
		return 0, nil, fmt.Errorf("submit job %d: %w", k, err)
	}
	deadline := t0.Add(timeout)
	var att int
	var hosts []string
	for hosts == nil {
		c.nodes[l].FSM().View(func(s *raftfsm.State) {
			if j := s.Jobs[res.ID]; j != nil {
				if a := j.Current(); a != nil && len(a.Hosts) > 0 {
					att = a.N
					for _, h := range a.Hosts {
						hosts = append(hosts, h.Node)
					}
				}
			}
		})
		if hosts == nil {
			if time.Now().After(deadline) {
				return 0, nil, fmt.Errorf("job %d not placed after %v", res.ID, timeout)
			}
			time.Sleep(time.Millisecond) // polling interval, not synchronisation
		}
	}
	var took time.Duration
	for _, h := range hosts {
		i := c.Index(h)
		if i < 0 {
			return 0, nil, fmt.Errorf("job %d placed on %s, no agent of this run", res.ID, h)
		}
		for {
			held := false
			c.nodes[i].FSM().View(func(s *raftfsm.State) {
				if j := s.Jobs[res.ID]; j != nil {
					if a := j.Current(); a != nil && a.N == att && a.Holds(h) {
						held = true
					}
				}
			})
			if held {
				took = max(took, time.Since(t0))
				break
			}
			if time.Now().After(deadline) {
				return 0, nil, fmt.Errorf("job %d attempt %d: %s does not hold it after %v", res.ID, att, h, timeout)
			}
			time.Sleep(time.Millisecond) // polling interval, not synchronisation
		}
	}
	if err := cl.Kill(ctx, res.ID, c.owner); err != nil {
		return 0, nil, fmt.Errorf("job %d: free its slots: %w", res.ID, err)
	}
	return took, hosts, nil
}
