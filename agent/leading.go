package agent

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/httpapi"
	"github.com/shoal-hpc/shoal/nodestate"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// This file runs the leader core (package leader) while this node leads:
// it builds the core's View from raft's state, gossip and raft's
// configuration, proposes the commands the core returns, applies its
// membership changes, and feeds what raft answered into the core's Book.
// The decisions themselves are the core's.

// leading runs the leader core for one agent. It holds what the core
// needs, not the agent: raft, the FSM, gossip, the clock, a way to
// propose, and the core's Book between rounds and leadership terms (a
// node that leads again keeps its memory, as it always did).
type leading struct {
	log    *slog.Logger
	raft   *raft.Raft
	fsm    *raftfsm.FSM
	gossip *gossip.Gossip
	// rows is the network row this server holds for a node of a boot
	// (netRows.leaderRow): the matrix no longer travels in gossip.
	rows  rowSource
	clock func() time.Time
	// config is the core's configuration as it is now (elastic options
	// change at run time).
	config func() leader.Config
	// apply commits one encoded command on this node, the leader.
	apply func(context.Context, []byte) (api.ApplyResult, error)
	// leaderCh hears raft's leadership changes, applied every applied entry.
	leaderCh <-chan bool
	applied  <-chan struct{}
	// hooks are the leader duties that are not the core's (limits).
	hooks []func(context.Context)
	// observePlacement records the time one job's placement took
	// (shoal_placement_seconds); nil records nothing.
	observePlacement func(time.Duration)
	// pilot is this server's autopilot, run while it leads (autopilot.go).
	pilot *pilot
	// name is this node's; placements keeps why each committed placement
	// was decided (the dashboard's explanation).
	name       string
	placements *placementLog
	// leases are the nodes' lease renewals this leader answered (leases.go).
	leases *leaseBook
	// led is the term whose barrier this loop passed, for read indexes
	// (readindex.go).
	led *ledTerm

	mu   sync.Mutex
	book leader.Book
}

// formationSettle is leader.ProbeConfig.Settle: how long a forming
// cluster's membership must stay the same before the first bandwidth
// cycle, which measures the network model first, is planned. Agents
// started together join within a few seconds of each other.
const formationSettle = 3 * time.Second

// leaderConfig is the core's configuration from the agent's, read anew
// each round: the elastic options and what a SIGHUP reloads (live) change
// at run time.
func leaderConfig(cfg Config, elastic *elasticSettings, live *liveConfig) func() leader.Config {
	return func() leader.Config {
		r := live.load()                // what a SIGHUP may have changed
		pc := r.probeConfig(cfg.Probes) // the zero config is the defaults: expanded first
		return leader.Config{Self: cfg.Name, Voters: cfg.voters(), Servers: cfg.Servers,
			CoallocTimeout: cfg.CoallocTimeout, PlacementModelWait: cfg.PlacementModelWait, JobRetention: r.JobRetention, HistoryRetention: r.HistoryRetention,
			Elastic: elastic.get().Decision, RefusePlacement: cfg.Testing.RefusePlacement, Fence: cfg.Fence,
			Probes: leader.ProbeConfig{Supervise: pc.Supervise, Budget: pc.BudgetConfig(), RoundLen: pc.RoundLen(),
				BandwidthInterval: pc.BandwidthInterval, Topo: pc.Topo, Settle: formationSettle}}
	}
}

func (l *leading) update(fn func(*leader.Book)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(&l.book)
}

// loop runs the leader's duties for as long as this node leads.
func (l *leading) loop(ctx context.Context) {
	var stop context.CancelFunc
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			if stop != nil {
				stop()
			}
			return
		case isLeader := <-l.leaderCh:
			if stop != nil {
				stop()
				stop = nil
			}
			if !isLeader {
				l.log.Info("lost raft leadership")
				continue
			}
			l.log.Info("gained raft leadership")
			var lctx context.Context
			lctx, stop = context.WithCancel(ctx)
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.lead(lctx)
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
func (l *leading) lead(ctx context.Context) {
	term := l.raft.CurrentTerm()
	if err := l.raft.Barrier(5 * time.Second).Error(); err != nil {
		l.log.Warn("barrier after gaining leadership", "err", err)
		return
	}
	if l.led != nil {
		l.led.term.Store(term)
	}
	// Counted from after the barrier, later than the term's real start:
	// the later the count starts, the surer a lost node's lease has lapsed.
	l.leases.led(l.clock())
	// Job GC runs even when retention is off: a SIGHUP may turn it on,
	// and the core proposes nothing while it is off.
	duties := []func(context.Context){l.reconcileMembership, l.scheduleJobs, l.leadProbes, l.collectJobs}
	duties = append(duties, l.hooks...)
	wakes := make([]chan struct{}, len(duties))
	var wg sync.WaitGroup
	if l.pilot != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.pilot.run(ctx)
		}()
	}
	// The wanted servers are this leader's to publish only while it leads.
	defer l.gossip.Update(func(s *nodestate.NodeState) { s.Raft.Want = nil })
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
		case <-l.gossip.Changed():
		case <-l.applied:
		}
		for _, w := range wakes {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
}

// view is the core's input for one round on st.
func (l *leading) view(st *raftfsm.State) leader.View {
	heard, since := l.leases.view()
	return leader.View{Now: l.clock(), State: st, Nodes: leaderNodes(l.gossip, l.rows), Config: l.config(),
		Heard: heard, LeadingSince: since}
}

// rowSource is a node's network row as a server's table holds it, for
// the boot gossip shows (netRows.leaderRow); nil when none.
type rowSource func(node string, boot int64) []nodestate.NetEntry

// leaderNodes reads what gossip observes, and the rows the servers hold,
// as the core's nodes (leader.NodeOf).
func leaderNodes(g *gossip.Gossip, rows rowSource) []leader.Node {
	entries := g.Nodes()
	out := make([]leader.Node, 0, len(entries))
	for _, e := range entries {
		var net []nodestate.NetEntry
		if e.HasState && rows != nil {
			net = rows(e.State.Name, e.State.Boot)
		}
		out = append(out, leader.NodeOf(e, net))
	}
	return out
}

// placementSnapshot is placement's input from what gossip observes and
// what raft holds (leader.Snapshot): the leader's and `shoal alloc`'s.
func placementSnapshot(g *gossip.Gossip, rows rowSource, st *raftfsm.State, now time.Time) placement.Snapshot {
	return leader.Snapshot(st, leaderNodes(g, rows), now)
}

// scheduleJobs runs the core's job scheduling (leader.Schedule) once, on
// a copy of the state that shares its jobs (raftfsm.State.Shared): a long
// placement must not hold the FSM's lock, and a deep copy of a large
// queue each round would cost more than the round.
//
// The round's placement time, from its start to the last allocation
// committed, shared among the jobs it placed, is each one's
// shoal_placement_seconds: placement decides all of a round's jobs on one
// snapshot, so one job's share is all there is to measure. Wall-clock
// time, not the leader's injected clock: a duration, not a date.
func (l *leading) scheduleJobs(ctx context.Context) {
	start, placed, last := time.Now(), 0, time.Time{}
	defer func() {
		if placed > 0 && l.observePlacement != nil {
			per := last.Sub(start) / time.Duration(placed)
			for range placed {
				l.observePlacement(per)
			}
		}
	}()
	var decided time.Time
	schedule := func(v leader.View, b leader.JobsBook) ([]leader.Command, leader.JobsBook) {
		cmds, b := leader.Schedule(v, b)
		decided = time.Now()
		return cmds, b
	}
	runDuty(ctx, l, false, func(b *leader.Book) *leader.JobsBook { return &b.Jobs }, schedule,
		func(c leader.Command, a leader.Answer) {
			if p, ok := c.Body.(raftfsm.PlaceJob); ok && a.Taken() {
				placed, last = placed+1, time.Now()
				if c.Explain != nil && l.placements != nil {
					l.placements.record(httpapi.Placement{Job: p.ID, Attempt: p.Attempt, At: l.clock(), Leader: l.name, Score: *c.Explain})
				}
				launchtrace.Mark(ctx, l.log, launchtrace.RoundStart, p.ID, p.Attempt, start)
				launchtrace.Mark(ctx, l.log, launchtrace.Placed, p.ID, p.Attempt, decided)
				launchtrace.Mark(ctx, l.log, launchtrace.PlaceCommitted, p.ID, p.Attempt, last)
			}
			if s, ok := c.Body.(raftfsm.StartJob); ok && a.Taken() {
				launchtrace.Mark(ctx, l.log, launchtrace.StartCommitted, s.ID, s.Attempt, time.Now())
			}
			if p, ok := c.Body.(raftfsm.PlaceJob); ok && !a.Taken() {
				// One job refused must not hold up the jobs behind it: the
				// next round rejects it if raft would refuse it every round
				// (the Book remembers the refusal).
				l.log.Warn("placement refused by raft", "job", p.ID, "code", a.Code, "err", a.Err)
			}
		})
}

// leadProbes runs the core's probe supervision and bandwidth schedule
// (leader.Probes) once.
func (l *leading) leadProbes(ctx context.Context) {
	runDuty(ctx, l, true, func(b *leader.Book) *leader.ProbesBook { return &b.Probes }, leader.Probes, nil)
}

// collectJobs runs the core's job janitor (leader.CollectJobs) once.
func (l *leading) collectJobs(ctx context.Context) {
	runDuty(ctx, l, true, func(b *leader.Book) *leader.GCBook { return &b.GC }, leader.CollectJobs, nil)
}

// runDuty runs one duty of the core once: it reads the duty's part of
// the Book, decides on the current state (under the FSM's read lock when
// live, else on a copy, with the round canceled with ctx), keeps the
// part, and carries the commands out (leader.CarryOut), folding raft's
// answers into the Book. taken, when set, hears each answer as well.
func runDuty[B any](ctx context.Context, l *leading, live bool, part func(*leader.Book) *B,
	decide func(leader.View, B) ([]leader.Command, B), taken func(leader.Command, leader.Answer)) {
	var b B
	l.update(func(bk *leader.Book) { b = *part(bk) })
	var cmds []leader.Command
	if live {
		v := l.view(nil)
		l.fsm.View(func(s *raftfsm.State) {
			v.State = s
			cmds, b = decide(v, b)
		})
	} else {
		// The core reads the state, never writes it: a copy sharing the jobs will do.
		v := l.view(l.fsm.Shared())
		v.Done = ctx.Done() // the agent stopping or leadership lost ends a long placement
		cmds, b = decide(v, b)
	}
	// The part is this duty's alone, and an answer touches only the part
	// of the duty that decided the command: keeping the part first and
	// folding the answers into the whole Book after comes to the same.
	l.update(func(bk *leader.Book) { *part(bk) = b })
	leader.CarryOut(&proposer{ctx: ctx, l: l, taken: taken}, cmds)
}

// proposer carries one round of the core's commands out through raft
// and logs the notes the core attached to them.
type proposer struct {
	ctx   context.Context
	l     *leading
	taken func(leader.Command, leader.Answer)
}

var _ leader.BatchProposer = (*proposer)(nil)

func (p *proposer) Propose(c leader.Command) (leader.Answer, error) {
	if c.Before != nil {
		p.l.log.Info(c.Before.Msg, c.Before.Attrs...)
	}
	res, err := p.l.propose(p.ctx, c.Type, c.Body)
	ok := err == nil && res.Err == ""
	switch {
	case ok && c.After != nil:
		p.l.log.Info(c.After.Msg, c.After.Attrs...)
	case !ok && c.Failed != nil:
		p.l.log.Warn(c.Failed.Msg, append(c.Failed.Attrs, "err", err, "refused", res.Err)...)
	}
	return leader.Answer{Code: res.Code, Err: res.Err}, err
}

// ProposeBatch commits cs, commands of one kind, as one raftfsm.Batch and
// returns the answer to each command the batch applied, logging the
// notes the core attached to them.
func (p *proposer) ProposeBatch(cs []leader.Command, stopAtRefusal bool) ([]leader.Answer, error) {
	b := raftfsm.Batch{StopAtRefusal: stopAtRefusal}
	for _, c := range cs {
		if c.Before != nil {
			p.l.log.Info(c.Before.Msg, c.Before.Attrs...)
		}
		it, err := raftfsm.NewBatchItem(c.Type, c.Body)
		if err != nil {
			p.l.log.Error("encode command", "type", c.Type, "err", err)
			return nil, err
		}
		b.Commands = append(b.Commands, it)
	}
	res, err := p.l.propose(p.ctx, raftfsm.CmdBatch, b)
	out := make([]leader.Answer, 0, len(cs))
	for i, c := range cs {
		var a leader.Answer
		switch r, ok := res.Result(i); {
		case err != nil:
		case res.Err != "": // refused whole: each command with it
			a = leader.Answer{Code: res.Code, Err: res.Err}
		case !ok:
			return out, nil // the batch stopped before it
		default:
			a = leader.Answer{Code: r.Code, Err: r.Err}
		}
		switch {
		case err == nil && a.Taken() && c.After != nil:
			p.l.log.Info(c.After.Msg, c.After.Attrs...)
		case (err != nil || !a.Taken()) && c.Failed != nil:
			p.l.log.Warn(c.Failed.Msg, append(c.Failed.Attrs, "err", err, "refused", a.Err)...)
		}
		if err == nil {
			out = append(out, a)
		}
	}
	return out, err
}

func (p *proposer) Answered(c leader.Command, a leader.Answer) {
	p.l.update(func(bk *leader.Book) { *bk = bk.Answered(c, a) })
	if p.taken != nil {
		p.taken(c, a)
	}
}

// Skipped logs nothing: the next round decides the command again.
func (p *proposer) Skipped(leader.Command) {}

// propose commits one command from the leader. The error is raft's (not
// the leader, timeout); a command the FSM refused comes back in res.Err
// and res.Code. Refusals of stale or repeated commands are expected
// after a leader change.
func (l *leading) propose(ctx context.Context, typ string, body any) (api.ApplyResult, error) {
	b, err := raftfsm.Encode(typ, l.clock(), body)
	if err != nil {
		l.log.Error("encode command", "type", typ, "err", err)
		return api.ApplyResult{}, err
	}
	res, err := l.apply(ctx, b)
	if err != nil {
		l.log.Warn("propose", "type", typ, "err", err)
		return res, err
	}
	if res.Err != "" {
		l.log.Debug("command refused", "type", typ, "err", res.Err)
		return res, nil
	}
	l.log.Info("committed", "type", typ, "job", res.JobID)
	return res, nil
}

// reconcileMembership adds the servers gossip reports and raft lacks
// (leader.Membership), through autopilot, stopping at the first that
// fails, and publishes the clients the leader wants as servers
// (leader.WantedServers) in its gossip. Promotions, demotions and the
// removal of dead servers are autopilot's.
func (l *leading) reconcileMembership(ctx context.Context) {
	f := l.raft.GetConfiguration()
	if awaitFuture(ctx, f) != nil {
		return
	}
	v := leader.View{Now: l.clock(), Nodes: leaderNodes(l.gossip, l.rows), Config: l.config()}
	for _, s := range f.Configuration().Servers {
		v.Servers = append(v.Servers, leader.Server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	var want []string
	l.fsm.View(func(st *raftfsm.State) {
		v.State = st
		want = leader.WantedServers(v)
		v.State = nil
	})
	if !slices.Equal(want, l.gossip.Self().Raft.Want) {
		l.gossip.Update(func(s *nodestate.NodeState) { s.Raft.Want = want })
		if len(want) > 0 {
			l.log.Info("servers below target: clients wanted as servers", "want", want, "servers", v.Config.Servers)
		}
	}
	for _, act := range leader.Membership(v) {
		if ctx.Err() != nil {
			return
		}
		if err := l.pilot.add(act.ID, act.Addr); err != nil {
			l.log.Warn("raft membership change failed", "action", act.Kind, "server", act.ID, "err", err)
			return
		}
		l.log.Info("raft membership changed", "action", act.Kind, "server", act.ID, "why", act.Why)
	}
}

// awaitFuture waits for a raft future until ctx ends. A membership change
// enqueued just before raft shut down may never be answered; without this
// the leader loop, and Shutdown waiting on it, would hang.
func awaitFuture(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// memberRoles are the members' roles for `shoal members`: leader,
// voter, nonvoter for raft's servers (raft's configuration on a server,
// r; the servers' gossip on a client, r nil), client for the agents that
// follow, none while a node has not settled (not in raft yet).
func memberRoles(r *raft.Raft, g *gossip.Gossip) map[string]string {
	out := gossipRoles(g)
	if r == nil {
		return out
	}
	f := r.GetConfiguration()
	if f.Error() != nil {
		return out
	}
	for name, role := range out {
		if role != "client" {
			delete(out, name) // raft's configuration says
		}
	}
	_, leaderID := r.LeaderWithID()
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
