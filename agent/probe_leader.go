package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// probeLeader is the leader side of the probes: the supervisor's memory
// and the bandwidth cycles' bookkeeping, fed by the agent.
// TODO(#20 merge): leadercore's pure leader core replaces this file.
type probeLeader struct {
	cfg    probes.Config
	gossip *gossip.Gossip
	fsm    *raftfsm.FSM
	apply  func(context.Context, []byte) (api.ApplyResult, error)
	now    func() time.Time
	log    *slog.Logger

	sup        *probe.Supervisor
	cycleStart map[uint64]time.Time
	tries      map[probe.Pair]int // tests of each pair since the last full cycle (catch-up)
	counted    uint64             // the last cycle whose tests tries holds
}

func newProbeLeader(cfg probes.Config, g *gossip.Gossip, fsm *raftfsm.FSM, apply func(context.Context, []byte) (api.ApplyResult, error),
	now func() time.Time, log *slog.Logger) *probeLeader {
	return &probeLeader{cfg: cfg, gossip: g, fsm: fsm, apply: apply, now: now, log: log,
		sup: probe.NewSupervisor(cfg.Supervise), cycleStart: map[uint64]time.Time{}}
}

// lead is the leader's probe reconciler, run on every leader round: it
// relaunches probes that crashed or hung (seed 002's Central Monitor,
// recorded in raft), and keeps the bandwidth schedule going: a new cycle
// every BandwidthInterval, and the rest of a cycle without a node that
// died in it.
func (m *probeLeader) lead(ctx context.Context) {
	now := m.now()
	nodes := m.gossip.Nodes()
	m.supervise(ctx, now, nodes)
	m.schedule(ctx, now, nodes)
}

func (m *probeLeader) supervise(ctx context.Context, now time.Time, nodes []gossip.Entry) {
	var views []probe.ProbeView
	m.fsm.View(func(s *raftfsm.State) {
		for _, e := range nodes {
			if e.Status != gossip.StatusAlive || !e.HasState {
				continue
			}
			for _, b := range e.State.Probes {
				v := probe.ProbeView{Node: e.State.Name, Kind: b.Kind, State: b.State, Running: uint64(b.Restarts), Beat: b.Beat}
				if p, ok := s.Probes[raftfsm.ProbeKey{Node: v.Node, Kind: v.Kind}]; ok {
					v.Desired, v.LastRestart = p.Generation, p.LastRestartAt
				}
				views = append(views, v)
			}
		}
	})
	for _, r := range m.sup.Decide(now, views) {
		m.log.Info("ordering probe relaunch", "node", r.Node, "probe", r.Kind, "reason", r.Reason, "generation", r.Generation)
		m.commit(ctx, raftfsm.CmdProbeRestart, raftfsm.ProbeRestart{Node: r.Node, Kind: r.Kind, Reason: r.Reason, Generation: r.Generation})
	}
}

func (m *probeLeader) schedule(ctx context.Context, now time.Time, nodes []gossip.Entry) {
	up := map[string]bool{}
	var members []string
	last := map[probe.Pair]time.Time{}
	for _, e := range nodes {
		s := e.State
		if e.Status == gossip.StatusAlive && e.HasState && s.ProbePort > 0 {
			up[s.Name] = true
			members = append(members, s.Name)
		}
		for _, c := range s.Net {
			if c.BWAt > 0 {
				p := probe.NewPair(s.Name, c.Peer)
				if at := time.UnixMilli(c.BWAt); at.After(last[p]) {
					last[p] = at
				}
			}
		}
	}
	gone := func(n string) bool { return !up[n] }
	var d raftfsm.ProbeDuties
	var rounds [][]probe.Duty
	m.fsm.View(func(s *raftfsm.State) {
		d = s.ProbeDuties
		rounds = fromRaftRounds(d.Rounds)
		d.Rounds = nil
	})
	cur := probe.RoundAt(d.SetAt, d.RoundLen, len(rounds), now)
	if d.Cycle > 0 && cur < len(rounds) {
		// Mid-cycle: drop a dead node from the rounds still to come. The
		// round under way keeps its slot (as an empty round) so no node
		// is put into two tests at once.
		if probe.Involves(rounds, cur+1, gone) {
			rest := append([][]probe.Duty{nil}, probe.Remaining(rounds, cur, gone)...)
			m.log.Info("dropping dead nodes from the bandwidth cycle", "cycle", d.Cycle, "rounds_left", len(rest)-1)
			m.commit(ctx, raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: d.Cycle, Rounds: toRaftRounds(rest), RoundLen: d.RoundLen})
		}
		return
	}
	if len(members) < 2 {
		return
	}
	cycle := d.Cycle + 1
	rl := m.cfg.RoundLen()
	if d.Cycle > 0 {
		start, ok := m.cycleStart[d.Cycle]
		if !ok {
			start = d.SetAt
		}
		if now.Before(probe.NextCycleAt(start, d.SetAt, len(rounds), d.RoundLen, m.cfg.BandwidthInterval)) {
			m.catchUp(ctx, now, members, last, rounds, cycle, start)
			return
		}
	}
	plan := probe.PlanCycle(members, last, m.cfg.BudgetConfig(), now)
	if m.commit(ctx, raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: cycle, Rounds: toRaftRounds(probe.Orient(plan.Rounds, cycle)), RoundLen: rl}) {
		m.cycleStart = map[uint64]time.Time{cycle: now}
		m.tries, m.counted = map[probe.Pair]int{}, 0 // counted when the cycle has run
		m.log.Info("bandwidth cycle scheduled", "cycle", cycle, "nodes", len(members), "rounds", len(plan.Rounds),
			"tests_per_node", plan.TestsPerNode, "deferred_pairs", len(plan.Deferred), "cycle_time", time.Duration(len(plan.Rounds))*rl)
	}
}

// catchUp runs, between full cycles, a short cycle for the never-measured
// pairs of nodes that joined since, and retries a failed test once
// (probe.PlanCatchUp). It keeps the full cycle's start, so catching up does
// not push the next full cycle back.
func (m *probeLeader) catchUp(ctx context.Context, now time.Time, members []string, last map[probe.Pair]time.Time, done [][]probe.Duty, cycle uint64, fullStart time.Time) {
	if m.tries == nil {
		m.tries = map[probe.Pair]int{} // a new leader: it knows the last recorded cycle only
	}
	if m.counted != cycle-1 {
		// The cycle just ended has not been counted yet (this leader did not
		// plan it, or planned it before it ended): count its tests once.
		for _, r := range done {
			for _, t := range r {
				m.tries[probe.NewPair(t.From, t.To)]++
			}
		}
		m.counted = cycle - 1
	}
	plan := probe.PlanCatchUp(members, last, m.tries, m.cfg.BudgetConfig(), now)
	if len(plan.Rounds) == 0 {
		return
	}
	rl := m.cfg.RoundLen()
	if m.commit(ctx, raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: cycle, Rounds: toRaftRounds(probe.Orient(plan.Rounds, cycle)), RoundLen: rl}) {
		m.cycleStart = map[uint64]time.Time{cycle: fullStart}
		m.log.Info("bandwidth catch-up cycle scheduled", "cycle", cycle, "pairs", len(plan.Pairs()), "rounds", len(plan.Rounds),
			"cycle_time", time.Duration(len(plan.Rounds))*rl)
	}
}

// commit proposes a command and reports whether raft took it.
func (m *probeLeader) commit(ctx context.Context, typ string, body any) bool {
	cmd, err := raftfsm.Encode(typ, m.now(), body)
	if err != nil {
		m.log.Error("encode probe command", "type", typ, "err", err)
		return false
	}
	res, err := m.apply(ctx, cmd)
	if err != nil {
		m.log.Warn("probe command not committed", "type", typ, "err", err)
		return false
	}
	if res.Err != "" {
		m.log.Info("probe command refused", "type", typ, "err", res.Err)
		return false
	}
	return true
}

func fromRaftRounds(rs [][]raftfsm.Pair) [][]probe.Duty {
	out := make([][]probe.Duty, len(rs))
	for i, r := range rs {
		for _, p := range r {
			out[i] = append(out[i], probe.Duty{From: p.From, To: p.To})
		}
	}
	return out
}

func toRaftRounds(rs [][]probe.Duty) [][]raftfsm.Pair {
	out := make([][]raftfsm.Pair, len(rs))
	for i, r := range rs {
		out[i] = []raftfsm.Pair{}
		for _, d := range r {
			out[i] = append(out[i], raftfsm.Pair{From: d.From, To: d.To})
		}
	}
	return out
}
