package leader

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Probes is the leader's probe reconciler: it relaunches probes that
// crashed or hung (seed 002's Central Monitor, recorded in raft), and
// keeps the bandwidth schedule going: a new cycle every
// BandwidthInterval (the topology planner's O(n + s²) tests over the
// network model), joiners' tests and re-tests of readings taken beside
// traffic within the cycle under way, a catch-up after it, the rest of a
// cycle without a node that died in it, and the switches inferred from
// the rows recorded in raft.
func Probes(v View, b ProbesBook) ([]Command, ProbesBook) {
	cmds, b := supervise(v, b)
	more, b := scheduleCycle(v, b)
	cmds = append(cmds, more...)
	more, b = recordSwitches(v, b)
	return append(cmds, more...), b
}

func supervise(v View, b ProbesBook) ([]Command, ProbesBook) {
	var views []probeplan.ProbeView
	for _, n := range v.Nodes {
		if n.Status != nodestate.StatusAlive || !n.HasState {
			continue
		}
		for _, pb := range n.Probes {
			pv := probeplan.ProbeView{Node: n.Name, Kind: pb.Kind, State: pb.State, Running: uint64(pb.Restarts), Beat: pb.Beat}
			if p, ok := v.State.Probes[raftfsm.ProbeKey{Node: pv.Node, Kind: pv.Kind}]; ok {
				pv.Desired, pv.LastRestart = p.Generation, p.LastRestartAt
			}
			views = append(views, pv)
		}
	}
	restarts, sup := b.Supervisor.Decide(v.Config.Probes.Supervise, v.Now, views)
	b.Supervisor = sup
	var cmds []Command
	for _, r := range restarts {
		cmds = append(cmds, Command{Type: raftfsm.CmdProbeRestart,
			Body:   raftfsm.ProbeRestart{Node: r.Node, Kind: r.Kind, Reason: r.Reason, Generation: r.Generation},
			Before: note("ordering probe relaunch", "node", r.Node, "probe", r.Kind, "reason", r.Reason, "generation", r.Generation)})
	}
	return cmds, b
}

func scheduleCycle(v View, b ProbesBook) ([]Command, ProbesBook) {
	now, cfg := v.Now, v.Config.Probes
	up := map[string]bool{}
	var members []string
	last := map[probeplan.Pair]time.Time{}
	for _, n := range v.Nodes {
		if n.Status == nodestate.StatusAlive && n.HasState && n.ProbePort > 0 {
			up[n.Name] = true
			members = append(members, n.Name)
		}
		for _, c := range n.Net {
			if c.BWAt > 0 {
				p := probeplan.NewPair(n.Name, c.Peer)
				if at := time.UnixMilli(c.BWAt); at.After(last[p]) {
					last[p] = at
				}
			}
		}
	}
	gone := func(n string) bool { return !up[n] }
	d := v.State.ProbeDuties
	rounds := fromRaftRounds(d.Rounds)
	d.Rounds = nil
	cur := probeplan.RoundAt(d.SetAt, d.RoundLen, len(rounds), now)
	if d.Cycle > 0 && cur < len(rounds) {
		// Mid-cycle: drop a dead node from the rounds still to come. The
		// round under way keeps its slot (as an empty round) so no node
		// is put into two tests at once.
		if probeplan.Involves(rounds, cur+1, gone) {
			rest := append([][]probeplan.Duty{nil}, probeplan.Remaining(rounds, cur, gone)...)
			return []Command{{Type: raftfsm.CmdSetProbeDuties, Body: raftfsm.SetProbeDuties{Cycle: d.Cycle, Rounds: toRaftRounds(rest), RoundLen: d.RoundLen},
				Before: note("dropping dead nodes from the bandwidth cycle", "cycle", d.Cycle, "rounds_left", len(rest)-1)}}, b
		}
		return extendCycle(v, b, members, last, rounds, cur)
	}
	if len(members) < 2 {
		return nil, b
	}
	if d.Cycle == 0 && !formationSettled(v.Nodes, now, cfg.Settle) {
		return nil, b
	}
	cycle := d.Cycle + 1
	rl := cfg.RoundLen
	if d.Cycle > 0 {
		start, ok := b.CycleStart[d.Cycle]
		if !ok {
			start = d.SetAt
		}
		if now.Before(probeplan.NextCycleAt(start, d.SetAt, len(rounds), d.RoundLen, cfg.BandwidthInterval)) {
			return catchUp(v, b, members, last, rounds, cycle, start)
		}
	}
	in := topoInput(v, members, last, cycle)
	plan := probeplan.PlanTopoCycle(in)
	b = b.planned(cycle, members, true)
	return []Command{{Type: raftfsm.CmdSetProbeDuties,
		Body:  raftfsm.SetProbeDuties{Cycle: cycle, Rounds: toRaftRounds(probeplan.Orient(plan.Rounds, cycle)), RoundLen: rl},
		Cycle: &CycleStart{Cycle: cycle, Start: now, Full: true},
		After: note("bandwidth cycle scheduled", "cycle", cycle, "nodes", len(members), "rounds", len(plan.Rounds),
			"tests", len(plan.Pairs()), "tests_per_node", plan.TestsPerNode, "own", plan.Kind["own"], "cross", plan.Kind["cross"],
			"uncertain", plan.Kind["uncertain"], "explore", plan.Kind["explore"], "deferred_switch_pairs", plan.DeferredSwitchPairs,
			"cycle_time", time.Duration(len(plan.Rounds))*rl)}}, b
}

// formationSettled reports whether a forming cluster's first bandwidth
// cycle may start: no alive member joined in the last settle and every one
// runs a bandwidth probe, or the first member was seen 4×settle ago (a
// node whose probe never starts does not hold the cycle back). settle <= 0
// is always settled.
func formationSettled(nodes []Node, now time.Time, settle time.Duration) bool {
	if settle <= 0 {
		return true
	}
	var oldest, newest time.Time
	ready := true
	for _, n := range nodes {
		if n.Status != nodestate.StatusAlive {
			continue
		}
		if oldest.IsZero() || n.Since.Before(oldest) {
			oldest = n.Since
		}
		if n.Since.After(newest) {
			newest = n.Since
		}
		ready = ready && n.HasState && n.ProbePort > 0
	}
	return now.Sub(oldest) >= 4*settle || (ready && now.Sub(newest) >= settle)
}

// extendCycle adds tests to the cycle under way: the network model's
// tests of members that joined while it runs (fresh: no measured pair, no
// test in what is left of the cycle, not given tests in this cycle yet;
// probeplan.PlanJoiners), so that a forming cluster's late joiner is measured
// within a few rounds, not after the cycle ends; and a test again of each
// pair whose test ran beside traffic that has gone since (contendedPairs,
// probeplan.RetestsInCycle) and read under retestLowShare of the network
// model's figure for the pair, once a cycle, in the next round
// (probeplan.PreemptTests), so that placement reads the pair's figure beside
// a job for a round or two, not until the cycle's last round (left to the
// catch-up, a steady-state placement 91 s after formation read a healthy
// pair at 41 Mbit/s and took a slower node). The catch-up after the cycle
// may test such a pair again (RetestTries); a re-test booked here that
// fails leaves the pair to the next full cycle (the booking outlives it).
func extendCycle(v View, b ProbesBook, members []string, last map[probeplan.Pair]time.Time, rounds [][]probeplan.Duty, cur int) ([]Command, ProbesBook) {
	d := v.State.ProbeDuties
	var fresh []string
	if b.Planned != nil { // a new leader does not know whom the cycle under way was planned for
		inCycle := map[string]bool{}
		for i := max(cur, 0); i < len(rounds); i++ {
			for _, t := range rounds[i] {
				inCycle[t.From], inCycle[t.To] = true, true
			}
		}
		for _, n := range unmeasured(members, last) {
			if !inCycle[n] && b.Planned[n] != d.Cycle {
				fresh = append(fresh, n)
			}
		}
	}
	var retest []probeplan.Pair
	testAt, lowAt := map[probeplan.Pair]int64{}, map[probeplan.Pair]float64{}
	// A leader that did not see the cycle start (a new one) cannot count
	// the cycle's tests against the cap: it leaves re-tests to the catch-up.
	start, started := b.CycleStart[d.Cycle]
	if started {
		for _, c := range retestCandidates(v.State, v.Nodes, members) {
			if _, done := b.Retested[c.Pair]; !done {
				retest = append(retest, c.Pair)
				testAt[c.Pair], lowAt[c.Pair] = c.At, c.Mbps
			}
		}
	}
	var link linkDue
	if started {
		link = linkRetests(v.Nodes, members, last, b, v.Now, false)
	}
	if len(fresh) == 0 && len(retest) == 0 && len(link.Pairs) == 0 {
		return nil, b
	}
	// Pairs that cannot be tested now (near the model's figure, the cap,
	// or the rounds left test them anyway) would have the model rebuilt
	// every leader round: remember the empty answer until the recorded
	// rounds or the readings change.
	key := fmt.Sprint("mid ", d.Cycle, d.SetAt.UnixMilli(), fresh, testAt, link.New)
	if len(fresh) == 0 && key == b.CatchUpEmpty {
		return nil, b
	}
	m := networkModel(v.Nodes, v.Config.Probes.Model)
	in := topoInputOf(m, v, members, last, d.Cycle)
	var tests []probeplan.Pair
	if len(fresh) > 0 {
		tests = probeplan.PlanJoiners(in, fresh)
		b = b.planned(d.Cycle, fresh, false)
	}
	// Within the cycle only a reading well below the model's figure for
	// its pair preempts the cycle's own tests: each re-test there moves
	// two tests of a full round back, and a small cluster's tournament,
	// every round full, grows a round per re-test (66 s to over 150 s on
	// ten nodes, when every reading beside traffic was re-tested). The others wait for the
	// catch-up.
	// A node whose link checks say its link changed has all its pairs
	// tested again first, whatever their readings: they are the old link's.
	in.Retest = append(slices.Clone(link.Pairs), slices.DeleteFunc(slices.Clone(retest), func(q probeplan.Pair) bool {
		e := m.Pair(q.A, q.B)
		return e.Known && e.PeakMbps > 0 && lowAt[q] >= retestLowShare*e.PeakMbps
	})...)
	// The rows hold a pair's latest test only: a re-test that has run
	// since its booking is a test of the cycle they no longer show.
	ran := map[string]int{}
	for q, at := range b.Retested {
		if last[q].UnixMilli() > at {
			ran[q.A]++
			ran[q.B]++
		}
	}
	again := probeplan.RetestsInCycle(in, start, rounds, cur, ran)
	if len(fresh) == 0 && len(again) == 0 {
		b.CatchUpEmpty = key
		return nil, b.bookLinks(link, rounds[max(cur, 0):], d.SetAt.Add(time.Duration(max(cur, 0))*d.RoundLen), d.RoundLen, last)
	}
	if len(again) > 0 {
		b = b.retested(again, testAt)
		joining := map[probeplan.Pair]bool{}
		for _, q := range tests {
			joining[q] = true
		}
		again = slices.DeleteFunc(again, func(q probeplan.Pair) bool { return joining[q] })
	}
	if len(tests) == 0 && len(again) == 0 {
		return nil, b.bookLinks(link, rounds[max(cur, 0):], d.SetAt.Add(time.Duration(max(cur, 0))*d.RoundLen), d.RoundLen, last)
	}
	// The round under way keeps its slot (as an empty round), as when a
	// node dies mid-cycle: no node is put into two tests at once. The
	// re-tests go into the next round, ahead of what it held.
	left := probeplan.MergeTests(rounds, cur, tests, in.Switch, d.Cycle)
	rest := append([][]probeplan.Duty{nil}, probeplan.PreemptTests(left, -1, again, in.Switch, d.Cycle)...)
	b = b.bookLinks(link, rest, v.Now, d.RoundLen, last)
	msg := "adding nodes that joined to the bandwidth cycle"
	switch {
	case len(fresh) > 0:
	case len(link.New) > 0:
		msg = "testing again, in the bandwidth cycle under way, the pairs of nodes whose link checks read a changed link"
	default:
		msg = "testing again, in the bandwidth cycle under way, pairs whose test ran beside traffic"
	}
	return []Command{{Type: raftfsm.CmdSetProbeDuties, Body: raftfsm.SetProbeDuties{Cycle: d.Cycle, Rounds: toRaftRounds(rest), RoundLen: d.RoundLen},
		Before: note(msg, "cycle", d.Cycle, "nodes", fresh, "joiner_tests", len(tests), "retests", again, "changed_links", slices.Sorted(maps.Keys(link.New)),
			"rounds_left", len(rest)-1)}}, b
}

// planned records in the book that the plan of cycle included nodes; a
// new plan (fresh) forgets the members of earlier cycles.
func (b ProbesBook) planned(cycle uint64, nodes []string, fresh bool) ProbesBook {
	next := map[string]uint64{}
	if !fresh {
		next = maps.Clone(b.Planned)
		if next == nil {
			next = map[string]uint64{}
		}
	}
	for _, n := range nodes {
		next[n] = cycle
	}
	b.Planned = next
	return b
}

// topoInput is the topology planner's input: the switches of the network
// model (declared, or inferred from the rows) and the pairs it wants
// tested directly.
func topoInput(v View, members []string, last map[probeplan.Pair]time.Time, cycle uint64) probeplan.TopoInput {
	return topoInputOf(networkModel(v.Nodes, v.Config.Probes.Model), v, members, last, cycle)
}

// topoInputOf is topoInput on a network model already built.
func topoInputOf(m *netmodel.Model, v View, members []string, last map[probeplan.Pair]time.Time, cycle uint64) probeplan.TopoInput {
	sw := make(map[string]string, len(members))
	for _, n := range members {
		sw[n] = m.Switch(n).Name
	}
	return probeplan.TopoInput{Members: members, Switch: sw, Last: last, Uncertain: m.Disagreements(), Cycle: cycle,
		Budget: v.Config.Probes.Budget, Config: v.Config.Probes.Topo, Now: v.Now}
}

// networkModel infers the switches of the nodes with a gossiped state
// (declared ones kept) from their network rows, and builds the model.
func networkModel(nodes []Node, cfg netmodel.Config) *netmodel.Model {
	names, declared, ms := modelInputs(nodes)
	return netmodel.Build(netmodel.Infer(names, declared, ms, cfg), ms, cfg)
}

// modelInputs are the network model's inputs from the nodes' rows.
func modelInputs(nodes []Node) ([]string, map[string]string, []netmodel.Measurement) {
	var names []string
	declared := map[string]string{}
	var ms []netmodel.Measurement
	for _, n := range nodes {
		if !n.HasState {
			continue
		}
		names = append(names, n.Name)
		if n.Attrs.Switch != "" {
			declared[n.Name] = n.Attrs.Switch
		}
		for _, c := range n.Net {
			ms = append(ms, netmodel.Measurement{A: n.Name, B: c.Peer, AvailMbps: c.AvailMbps, PeakMbps: c.PeakMbps, RTTus: c.RTT1us, BWAt: c.BWAt,
				OutMbps: c.OutMbps, InMbps: c.InMbps, OutAt: c.OutAt, InAt: c.InAt})
		}
	}
	return names, declared, ms
}

// catchUp runs, between full cycles, a short cycle for the nodes that
// joined since and have no measured pair yet (probeplan.PlanTopoCatchUp): a
// joiner gets its link measured within a round or two, not at the next
// full cycle. A pair is tried twice at most before the next full cycle.
// The same short cycle tests again pairs whose test ran beside traffic
// (contendedPairs) and the pairs of nodes whose link changed since their
// tests (linkRetests), those booked before whose tests did not land
// included. It keeps the full cycle's start, so catching up does not push
// the next full cycle back.
func catchUp(v View, b ProbesBook, members []string, last map[probeplan.Pair]time.Time, done [][]probeplan.Duty, cycle uint64, fullStart time.Time) ([]Command, ProbesBook) {
	b.Tries = maps.Clone(b.Tries)
	if b.Tries == nil {
		b.Tries = map[probeplan.Pair]int{} // a new leader: it knows the last recorded cycle only
	}
	if b.Counted != cycle-1 {
		// The cycle just ended has not been counted yet (this leader did not
		// plan it, or planned it before it ended): count its tests once.
		for _, r := range done {
			for _, t := range r {
				b.Tries[probeplan.NewPair(t.From, t.To)]++
			}
		}
		b.Counted = cycle - 1
	}
	fresh := unmeasured(members, last)
	var retest []probeplan.Pair
	testAt := map[probeplan.Pair]int64{}
	for _, c := range retestCandidates(v.State, v.Nodes, members) {
		if b.Tries[c.Pair] < probeplan.RetestTries && c.At > b.Retested[c.Pair] {
			retest = append(retest, c.Pair)
			testAt[c.Pair] = c.At
		}
	}
	link := linkRetests(v.Nodes, members, last, b, v.Now, true)
	if len(fresh) == 0 && len(retest) == 0 && len(link.Pairs) == 0 {
		return nil, b // the common case, every round between cycles: no model to build
	}
	// A node no test reaches would otherwise have the model rebuilt every
	// round for an empty plan: remember the empty answer until the cycle,
	// the unmeasured nodes or the pairs to test again change.
	key := fmt.Sprint(cycle, fresh, retest, link.Pairs)
	if key == b.CatchUpEmpty {
		return nil, b
	}
	in := topoInput(v, members, last, cycle)
	in.Linked, in.Retest = link.Pairs, retest
	plan := probeplan.PlanTopoCatchUp(in, b.Tries)
	rl := v.Config.Probes.RoundLen
	if len(plan.Rounds) == 0 {
		b.CatchUpEmpty = key
		return nil, b.bookLinks(link, nil, v.Now, rl, last)
	}
	rounds := probeplan.Orient(plan.Rounds, cycle)
	b = b.planned(cycle, members, true).retested(plan.Pairs(), testAt).bookLinks(link, rounds, v.Now, rl, last)
	return []Command{{Type: raftfsm.CmdSetProbeDuties,
		Body:  raftfsm.SetProbeDuties{Cycle: cycle, Rounds: toRaftRounds(rounds), RoundLen: rl},
		Cycle: &CycleStart{Cycle: cycle, Start: fullStart},
		After: note("bandwidth catch-up cycle scheduled", "cycle", cycle, "pairs", len(plan.Pairs()), "unmeasured_nodes", len(fresh),
			"retest_candidates", len(retest), "changed_links", link.Nodes, "rounds", len(plan.Rounds),
			"cycle_time", time.Duration(len(plan.Rounds))*rl)}}, b
}

// unmeasured lists, sorted, the members with no measured pair at all.
func unmeasured(members []string, last map[probeplan.Pair]time.Time) []string {
	seen := make(map[string]bool, len(members))
	for p, at := range last {
		if !at.IsZero() {
			seen[p.A], seen[p.B] = true, true
		}
	}
	var out []string
	for _, n := range members {
		if !seen[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func fromRaftRounds(rs [][]raftfsm.Test) [][]probeplan.Duty {
	out := make([][]probeplan.Duty, len(rs))
	for i, r := range rs {
		for _, p := range r {
			out[i] = append(out[i], probeplan.Duty{From: p.From, To: p.To})
		}
	}
	return out
}

func toRaftRounds(rs [][]probeplan.Duty) [][]raftfsm.Test {
	out := make([][]raftfsm.Test, len(rs))
	for i, r := range rs {
		out[i] = []raftfsm.Test{}
		for _, d := range r {
			out[i] = append(out[i], raftfsm.Test{From: d.From, To: d.To})
		}
	}
	return out
}

// contendedShare is how much other traffic, as a share of a test's
// reading, one end must have carried besides the test for the test to
// count as run beside traffic (contendedPairs).
const contendedShare = 0.25

// contended is a pair whose latest test ran beside other traffic, and
// when that test ended (Unix ms, the newest of its cells' directions that
// show it).
type contended struct {
	probeplan.Pair
	At int64
	// Mbps is the lowest reading of the directions that ran beside
	// traffic, as placement reads it (addBack: with what both ends
	// carried besides it).
	Mbps float64
}

// retestLowShare: a reading beside traffic at least this share of the
// network model's figure for its pair (netmodel.Model.Pair's peak) is
// not tested again within the cycle under way (extendCycle); the catch-up
// after the cycle still may.
const retestLowShare = 0.8

// contendedPairs lists, sorted by pair, the pairs of members whose
// latest test ran beside other traffic at an end, in either direction,
// and are worth testing again now (probeplan.BesideTraffic.RetestDue).
//
// Beside traffic: the end counted (NetEntry.CarriedOutMbps, CarriedInMbps) at least
// contendedShare of the reading, and 1 Mbit/s, besides the test. Such a
// test read the other traffic's share of a link, not what the link
// offers; when only one end was busy, addBack cannot tell whether the
// busy link or the path held the test back (a degraded link on the quiet
// end looks the same), so the reading stands and the catch-up tests the
// pair again (probeplan.RetestTries). On the testbed a first cycle read a
// healthy n01-n04 at 49.4 Mbit/s while n01 sent a cold-start job's
// 50 Mbit/s to other nodes, and netload avoided the pair until the next
// full cycle.
//
// Worth testing again: the end's latest traffic sample that way
// (Attrs.NetTxBytesPerSec, NetRxBytesPerSec) is under half of what it carried
// besides the test, or under what it carried besides it when the test ran on
// a full link at that end (its reading and the traffic beside it near the
// most the end's row shows its link carrying that way, linkCarried). A
// re-test while the traffic goes on as before reads the same share and spends
// the busy link's budget for nothing (as under lab12's flows, which run all
// along); the catch-up looks again every round, so the pair is tested once
// the traffic has dropped.
func contendedPairs(nodes []Node, members []string) []contended {
	live := make(map[string]bool, len(members))
	for _, m := range members {
		live[m] = true
	}
	beside := func(n *Node, rate, carried, nowBytes float64, out bool) bool {
		x := carried - rate
		if !(rate > 0 && x >= 1 && x >= contendedShare*rate) {
			return false
		}
		return probeplan.BesideTraffic{Mbps: rate, Besides: x, Now: nowBytes * 8 / 1e6, Link: linkCarried(n, out)}.RetestDue()
	}
	var ends *testEnds // built at the first test beside traffic: most rounds have none
	found := map[probeplan.Pair]contended{}
	for _, n := range nodes {
		if !live[n.Name] {
			continue
		}
		for _, c := range n.Net {
			if !live[c.Peer] {
				continue
			}
			p := probeplan.NewPair(n.Name, c.Peer)
			for _, out := range []bool{true, false} {
				rate, car, at, now := c.InMbps, c.CarriedInMbps, c.InAt, n.Attrs.NetRxBytesPerSec
				if out {
					rate, car, at, now = c.OutMbps, c.CarriedOutMbps, c.OutAt, n.Attrs.NetTxBytesPerSec
				}
				if at == 0 || !beside(&n, rate, car, now, out) {
					continue
				}
				if ends == nil {
					ends = &testEnds{hist: nodeTraffic(nodes), rows: nodeRows(nodes)}
				}
				read := ends.addBack(n.Name, &c, out)
				f, seen := found[p]
				if !seen {
					f = contended{Pair: p, Mbps: read}
				}
				f.At, f.Mbps = max(f.At, at), min(f.Mbps, read)
				found[p] = f
			}
		}
	}
	out := slices.Collect(maps.Values(found))
	slices.SortFunc(out, func(x, y contended) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	return out
}

// linkCarried is the most n's row shows its link carrying one way (out:
// sent) in any of its tests: the fastest reading, or the reading and the
// traffic beside it together where n counted them; 0 when none.
func linkCarried(n *Node, out bool) float64 {
	most := 0.0
	for _, c := range n.Net {
		if out {
			most = max(most, c.PeakOutMbps, c.CarriedOutMbps)
		} else {
			most = max(most, c.PeakInMbps, c.CarriedInMbps)
		}
	}
	return most
}
