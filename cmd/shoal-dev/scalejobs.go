package main

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/elastic"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// observer is one agent's copy of the replicated state (a server's raft
// FSM, or a client's replica) and when it first held each attempt placed
// on it: what that node's job reconciler would act on. It is woken as the
// reconciler is, after every applied entry.
type observer struct {
	name string
	fsm  *raftfsm.FSM
	wake chan struct{}

	mu   sync.Mutex
	seen map[attemptKey]time.Time
}

type attemptKey struct {
	job     uint64
	attempt int
}

func newObserver(name string, fsm *raftfsm.FSM) *observer {
	return &observer{name: name, fsm: fsm, wake: make(chan struct{}, 1), seen: map[attemptKey]time.Time{}}
}

// run looks at the state after every wake until stop closes.
func (o *observer) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-o.wake:
			o.look(time.Now())
		}
	}
}

// look records, at now, every current attempt that places ranks on this
// node and was not seen before.
func (o *observer) look(now time.Time) {
	o.fsm.View(func(s *raftfsm.State) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for id, j := range s.Jobs {
			if att := j.Current(); att != nil && att.Holds(o.name) {
				k := attemptKey{id, att.N}
				if _, ok := o.seen[k]; !ok {
					o.seen[k] = now
				}
			}
		}
	})
}

func (o *observer) seenAt(k attemptKey) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.seen[k]
	return t, ok
}

// benchJobSpec is the job every round submits: 160 ranks, 40 a node, so
// four of the 40-core nodes, placed by the default policy (netload).
func benchJobSpec() raftfsm.JobSpec {
	return raftfsm.JobSpec{Cmd: []string{"/bin/true"}, NP: 160, PPN: 40}
}

// benchLeaderConfig is the leader core's configuration with the agent's
// defaults.
func benchLeaderConfig(self string) leader.Config {
	return leader.Config{Self: self, Voters: 3, CoallocTimeout: 10 * time.Second,
		JobRetention: time.Hour, Elastic: elastic.DefaultConfig(),
		Probes: leader.ProbeConfig{Supervise: probeplan.DefaultSuperviseConfig(), Budget: probeplan.DefaultBudgetConfig(),
			RoundLen: 6 * time.Second, BandwidthInterval: 5 * time.Minute}}
}

// leaderNodes reads the leader's gossip table as the agent does
// (leader.NodeOf), and gives each node the network row the servers' row
// table would hold for it (rows do not travel in gossip): rows[name].
func leaderNodes(g *gossip.Gossip, rows map[string][]nodestate.NetEntry) []leader.Node {
	entries := g.Nodes()
	out := make([]leader.Node, 0, len(entries))
	for _, e := range entries {
		out = append(out, leader.NodeOf(e, rows[e.State.Name]))
	}
	return out
}

// syntheticRows is the network matrix the servers hold for placement, at
// the boundary (probes are not run): each node has measured its two
// neighbours on the switch order and peerLinks random peers, as a bounded
// probe schedule gives at scale; 0 peerLinks measures every pair (today's
// full rows). Same-switch links are fast and near, cross-switch ones
// slower through the uplinks, with seeded noise.
func syntheticRows(n, peerLinks int, seed uint64) map[string][]nodestate.NetEntry {
	rng := rand.New(rand.NewPCG(seed, 4))
	rows := make(map[string][]nodestate.NetEntry, n)
	link := func(i, j int) nodestate.NetEntry {
		e := nodestate.NetEntry{Peer: agentName(j), BWAt: 1795000000000, RTTAt: 1795000000000}
		if i/40 == j/40 { // syntheticState's switch: 40 nodes a switch
			e.RTT1us, e.PeakMbps = 60+40*rng.Float64(), 9412
		} else {
			e.RTT1us, e.PeakMbps = 250+200*rng.Float64(), 4000
		}
		e.AvailMbps = e.PeakMbps * (0.4 + 0.6*rng.Float64())
		return e
	}
	for i := range n {
		var row []nodestate.NetEntry
		if peerLinks == 0 {
			for j := range n {
				if j != i {
					row = append(row, link(i, j))
				}
			}
		} else {
			for _, j := range []int{i - 1, i + 1} {
				if j >= 0 && j < n {
					row = append(row, link(i, j))
				}
			}
			for range peerLinks {
				if j := rng.IntN(n); j != i {
					row = append(row, link(i, j))
				}
			}
		}
		rows[agentName(i)] = row
	}
	return rows
}

// jobBench submits jobs on the raft leader and times each to its nodes.
type jobBench struct {
	raft      *raftCluster
	gossip    func(leaderName string) *gossip.Gossip // the leader's gossip agent
	rows      map[string][]nodestate.NetEntry
	observers map[string]*observer // every agent's, by name
	book      leader.JobsBook
}

// jobTiming is one job's figures.
type jobTiming struct {
	// Attempt is from proposing submit_job on the leader to the last of
	// the job's nodes holding its attempt in its own FSM.
	Attempt time.Duration
	// Place is the leader core's scheduling round that placed it
	// (leader.Schedule: leader.Snapshot, the queue, placement.Place).
	Place time.Duration
	Hosts []string
}

// round submits one job (submit_job on the leader), runs the leader core's
// job round on the leader's state and gossip view as the agent does after
// the submit wakes it, proposes its commands, and waits until every node
// the job was placed on holds the attempt. The job is then killed so its
// slots are free for the next round.
func (b *jobBench) round(k int, timeout time.Duration) (jobTiming, error) {
	var jt jobTiming
	t0 := time.Now()
	res, err := b.raft.apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: fmt.Sprintf("bench-%d", k), Owner: "bench", Spec: benchJobSpec()})
	if err != nil {
		return jt, err
	}
	id := res.JobID
	l := b.raft.leader()
	if l < 0 {
		return jt, fmt.Errorf("job %d: no raft leader to schedule it", id)
	}
	ls := b.raft.servers[l]
	v := leader.View{Now: time.Now(), State: ls.fsm.State(), Nodes: leaderNodes(b.gossip(ls.name), b.rows), Config: benchLeaderConfig(ls.name)}
	p0 := time.Now()
	cmds, book := leader.Schedule(v, b.book)
	jt.Place = time.Since(p0)
	b.book = book
	var placed *raftfsm.PlaceJob
	for _, c := range cmds {
		if _, err := b.raft.apply(c.Type, c.Body); err != nil {
			return jt, fmt.Errorf("job %d: %w", id, err)
		}
		if p, ok := c.Body.(raftfsm.PlaceJob); ok && p.ID == id {
			placed = &p
		}
	}
	if placed == nil {
		return jt, fmt.Errorf("job %d: the leader core did not place it (%d commands)", id, len(cmds))
	}
	key := attemptKey{id, placed.Attempt}
	deadline := t0.Add(timeout)
	for _, h := range placed.Hosts {
		o := b.observers[h.Node]
		if o == nil {
			return jt, fmt.Errorf("job %d placed on %s, which runs no replica", id, h.Node)
		}
		jt.Hosts = append(jt.Hosts, h.Node)
		for {
			at, ok := o.seenAt(key)
			if ok {
				jt.Attempt = max(jt.Attempt, at.Sub(t0))
				break
			}
			if time.Now().After(deadline) {
				return jt, fmt.Errorf("job %d attempt %d: %s does not hold it after %v", id, placed.Attempt, h.Node, timeout)
			}
			time.Sleep(time.Millisecond) // polling interval, not synchronisation
		}
	}
	if _, err := b.raft.apply(raftfsm.CmdKillJob, raftfsm.KillJob{ID: id, User: "bench"}); err != nil {
		return jt, fmt.Errorf("job %d: free its slots: %w", id, err)
	}
	return jt, nil
}
