package agent

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// This file runs the leader core (package leader) while this node leads:
// it builds the core's View from raft's state, gossip and raft's
// configuration, proposes the commands the core returns, applies its
// membership changes, and feeds what raft answered into the core's Book.
// The decisions themselves are the core's.

// leaderBook keeps the core's Book between rounds and leadership terms
// (a node that leads again keeps its memory, as it always did). Each
// duty reads and writes its own part.
type leaderBook struct {
	mu sync.Mutex
	b  leader.Book
}

func (lb *leaderBook) update(fn func(*leader.Book)) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	fn(&lb.b)
}

// leaderLoop runs the leader's reconcilers for as long as this node leads.
func (a *Agent) leaderLoop(ctx context.Context) {
	var stop context.CancelFunc
	for {
		select {
		case <-ctx.Done():
			if stop != nil {
				stop()
			}
			return
		case isLeader := <-a.leaderCh:
			if stop != nil {
				stop()
				stop = nil
			}
			if !isLeader {
				a.log.Info("lost raft leadership")
				continue
			}
			a.log.Info("gained raft leadership")
			var lctx context.Context
			lctx, stop = context.WithCancel(ctx)
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				a.lead(lctx)
			}()
		}
	}
}

// lead runs while this node is leader. It first waits for every entry of
// earlier terms to be applied (Barrier), so decisions read a current FSM.
// Each duty of the core (membership, jobs, probes, job GC) and every
// leader hook runs in a loop of its own: a slow round of one (a probe
// relaunch storm on a loaded machine, a long placement) must not starve
// the others.
func (a *Agent) lead(ctx context.Context) {
	if err := a.raft.Barrier(5 * time.Second).Error(); err != nil {
		a.log.Warn("barrier after gaining leadership", "err", err)
		return
	}
	duties := []func(context.Context){func(context.Context) { a.reconcileMembership() }, a.scheduleJobs, a.leadProbes}
	if a.cfg.JobRetention > 0 {
		duties = append(duties, a.collectJobs)
	}
	duties = append(duties, a.leaderHooks...)
	wakes := make([]chan struct{}, len(duties))
	var wg sync.WaitGroup
	for i, fn := range duties {
		wakes[i] = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				fn(ctx)
				select {
				case <-ctx.Done():
					return
				case <-wakes[i]:
				}
			}
		}()
	}
	defer wg.Wait()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.gossip.Changed():
		case <-a.appliedLeader:
		}
		for _, w := range wakes {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
}

// leaderView is the core's input for one round on st.
func (a *Agent) leaderView(st *raftfsm.State) leader.View {
	pc := a.cfg.Probes.orDefault()
	return leader.View{Now: a.clock(), State: st, Nodes: a.leaderNodes(), Config: leader.Config{
		Self: a.cfg.Name, Voters: a.cfg.voters(), DeadVoterGrace: a.cfg.DeadVoterGrace,
		CoallocTimeout: a.cfg.CoallocTimeout, JobRetention: a.cfg.JobRetention,
		Elastic: a.elasticOptions().Decision, RefusePlacement: a.cfg.Testing.RefusePlacement,
		Probes: leader.ProbeConfig{Supervise: pc.Supervise, Budget: pc.budget(), RoundLen: pc.roundLen(),
			BandwidthInterval: pc.BandwidthInterval},
	}}
}

// leaderNodes converts what gossip observes into the core's nodes.
func (a *Agent) leaderNodes() []leader.Node {
	entries := a.gossip.Nodes()
	out := make([]leader.Node, 0, len(entries))
	for _, e := range entries {
		out = append(out, leaderNode(e))
	}
	return out
}

func leaderNode(e gossip.Entry) leader.Node {
	s := e.State
	n := leader.Node{Name: s.Name, Status: leader.Status(e.Status), Since: e.Since, HasState: e.HasState,
		RaftAddr: raftAddrOf(s), ProbePort: s.ProbePort,
		Attrs: placement.Node{Name: s.Name, Switch: s.Static.Switch, Cores: s.Static.Cores, Threads: s.Static.Threads,
			MHz: s.Static.MHz, MemTotal: s.Static.MemTotal, Load: pm(s.Dyn.Load), CPUUtil: pm(s.Dyn.CPUUtil),
			MemAvail: pm(s.Dyn.MemAvail), NetFlow: pm(s.Dyn.NetFlow), Users: s.Dyn.Users}}
	for _, pe := range s.Static.PEs {
		n.Attrs.PEs = append(n.Attrs.PEs, placement.PE{Kind: pe.Kind, Model: pe.Model, Count: pe.Count})
	}
	for _, ne := range s.Net {
		n.Net = append(n.Net, leader.NetEntry{Peer: ne.Peer, RTTus: ne.RTT1, BW: ne.BW, Peak: ne.Peak, BWAt: ne.BWAt, RTTAt: ne.RTTAt})
	}
	for _, b := range s.Probes {
		n.Probes = append(n.Probes, leader.ProbeBeat{Kind: b.Kind, State: b.State, Restarts: b.Restarts, Beat: b.Beat})
	}
	return n
}

func pm(m gossip.Means) placement.Means {
	return placement.Means{Now: m.Now, M1: m.M1, M5: m.M5, M15: m.M15}
}

// placementSnapshot is placement's input from what gossip observes and
// what raft holds (leader.Snapshot): the leader's and `shoal alloc`'s.
func (a *Agent) placementSnapshot(st *raftfsm.State) placement.Snapshot {
	return leader.Snapshot(st, a.leaderNodes())
}

// scheduleJobs runs the core's job scheduling (leader.Schedule) once.
func (a *Agent) scheduleJobs(ctx context.Context) {
	v := a.leaderView(a.fsm.State())
	v.Done = ctx.Done() // the agent stopping or leadership lost ends a long placement
	var b leader.JobsBook
	a.book.update(func(bk *leader.Book) { b = bk.Jobs })
	cmds, b := leader.Schedule(v, b)
	a.carryOut(ctx, cmds, func(c leader.Command, res api.ApplyResult) {
		if p, ok := c.Body.(raftfsm.PlaceJob); ok && c.Type == raftfsm.CmdPlaceJob && res.Err != "" {
			a.log.Warn("placement refused by raft", "job", p.ID, "code", res.Code, "err", res.Err)
			b = b.PlacementRefused(p.ID, p.Attempt, res.Code, res.Err)
		}
	})
	a.book.update(func(bk *leader.Book) { bk.Jobs = b })
}

// leadProbes runs the core's probe supervision and bandwidth schedule
// (leader.Probes) once.
func (a *Agent) leadProbes(ctx context.Context) {
	v := a.leaderView(nil)
	var b leader.ProbesBook
	a.book.update(func(bk *leader.Book) { b = bk.Probes })
	var cmds []leader.Command
	a.fsm.View(func(s *raftfsm.State) {
		v.State = s
		cmds, b = leader.Probes(v, b)
	})
	a.carryOut(ctx, cmds, func(c leader.Command, res api.ApplyResult) {
		if c.Cycle != nil && res.Err == "" {
			b = b.CycleCommitted(*c.Cycle)
		}
	})
	a.book.update(func(bk *leader.Book) { bk.Probes = b })
}

// collectJobs runs the core's job janitor (leader.CollectJobs) once.
func (a *Agent) collectJobs(ctx context.Context) {
	v := a.leaderView(nil)
	var b leader.GCBook
	a.book.update(func(bk *leader.Book) { b = bk.GC })
	var cmds []leader.Command
	a.fsm.View(func(s *raftfsm.State) {
		v.State = s
		cmds, b = leader.CollectJobs(v, b)
	})
	a.book.update(func(bk *leader.Book) { bk.GC = b })
	a.carryOut(ctx, cmds, nil)
}

// carryOut proposes a round's commands in order and logs the notes the
// core attached to them. taken, when set, hears raft's answer to each
// command raft committed (res.Err set when the FSM refused it). Once a
// placement command is not taken, the round's later placement commands
// are skipped: they counted it as committed.
func (a *Agent) carryOut(ctx context.Context, cmds []leader.Command, taken func(leader.Command, api.ApplyResult)) {
	skipPlacement := false
	for _, c := range cmds {
		if c.Placement && skipPlacement {
			continue
		}
		if c.Before != nil {
			a.log.Info(c.Before.Msg, c.Before.Attrs...)
		}
		res, err := a.proposeResult(ctx, c.Type, c.Body)
		ok := err == nil && res.Err == ""
		switch {
		case ok && c.After != nil:
			a.log.Info(c.After.Msg, c.After.Attrs...)
		case !ok && c.Failed != nil:
			a.log.Warn(c.Failed.Msg, append(c.Failed.Attrs, "err", err, "refused", res.Err)...)
		}
		if !ok && c.Placement {
			skipPlacement = true
		}
		if err == nil && taken != nil {
			taken(c, res)
		}
	}
}

// proposeResult commits one command from the leader. The error is raft's
// (not the leader, timeout); a command the FSM refused comes back in
// res.Err and res.Code. Refusals of stale or repeated commands are
// expected after a leader change.
func (a *Agent) proposeResult(ctx context.Context, typ string, body any) (api.ApplyResult, error) {
	b, err := raftfsm.Encode(typ, a.clock(), body)
	if err != nil {
		a.log.Error("encode command", "type", typ, "err", err)
		return api.ApplyResult{}, err
	}
	res, err := a.applyLocal(ctx, b)
	if err != nil {
		a.log.Warn("propose", "type", typ, "err", err)
		return res, err
	}
	if res.Err != "" {
		a.log.Debug("command refused", "type", typ, "err", res.Err)
		return res, nil
	}
	a.log.Info("committed", "type", typ, "job", res.JobID)
	return res, nil
}

// reconcileMembership applies the core's membership changes
// (leader.Membership), stopping at the first that fails.
func (a *Agent) reconcileMembership() {
	f := a.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	v := leader.View{Now: a.clock(), Nodes: a.leaderNodes(),
		Config: leader.Config{Self: a.cfg.Name, Voters: a.cfg.voters(), DeadVoterGrace: a.cfg.DeadVoterGrace}}
	for _, s := range f.Configuration().Servers {
		v.Servers = append(v.Servers, leader.Server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	for _, act := range leader.Membership(v) {
		var err error
		id, addr := raft.ServerID(act.ID), raft.ServerAddress(act.Addr)
		switch act.Kind {
		case leader.ActAdd:
			err = a.raft.AddNonvoter(id, addr, 0, 5*time.Second).Error()
		case leader.ActPromote:
			err = a.raft.AddVoter(id, addr, 0, 5*time.Second).Error()
		case leader.ActDemote:
			err = a.raft.DemoteVoter(id, 0, 5*time.Second).Error()
		case leader.ActRemove:
			err = a.raft.RemoveServer(id, 0, 5*time.Second).Error()
		}
		if err != nil {
			a.log.Warn("raft membership change failed", "action", act.Kind, "server", act.ID, "err", err)
			return
		}
		a.log.Info("raft membership changed", "action", act.Kind, "server", act.ID, "why", act.Why)
	}
}

// roles returns each server's raft role: leader, voter or nonvoter.
func (a *Agent) roles() map[string]string {
	out := map[string]string{}
	f := a.raft.GetConfiguration()
	if f.Error() != nil {
		return out
	}
	_, leaderID := a.raft.LeaderWithID()
	for _, s := range f.Configuration().Servers {
		switch {
		case s.ID == leaderID:
			out[string(s.ID)] = "leader"
		case s.Suffrage == raft.Voter:
			out[string(s.ID)] = "voter"
		default:
			out[string(s.ID)] = "nonvoter"
		}
	}
	return out
}
