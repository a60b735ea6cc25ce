package probeplan

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// TopoConfig bounds the per-cycle tests of the topology planner
// (PlanTopoCycle): each figure is per node or per switch, never per
// cluster, so a node's probe traffic does not grow with the cluster.
type TopoConfig struct {
	// OwnOffsets is how many ring offsets of its own switch a node is
	// tested at per cycle; each offset puts a node in two tests (one with
	// the peer ahead, one with the peer behind), one on a 2-node switch.
	// Default 1. The offset turns with the cycle, so over L-1 cycles a
	// node meets every peer of an L-node switch.
	OwnOffsets int
	// PairTests is how many tests each switch pair gets per cycle when the
	// per-switch and per-node caps allow. Default 1 (the direction turns
	// every cycle, Orient).
	PairTests int
	// CrossPerSwitch caps the cross-switch tests of one switch's uplink per
	// cycle; switch pairs over the cap wait, stalest first. Default 16.
	CrossPerSwitch int
	// CrossPerNode caps a node's cross-switch tests per cycle. Default 2.
	CrossPerNode int
	// UncertainPerNode caps a node's direct tests of uncertain pairs (the
	// model disagrees with a measurement) per cycle. Default 1.
	UncertainPerNode int
	// ExplorePerNode is how many tests a node of unknown switch gets per
	// cycle, against one node of each known switch in turn and other
	// unknown nodes, so that its switch can be inferred. Default 4.
	ExplorePerNode int
	// SmallCluster: a cluster of at most this many members gets every
	// pair tested (PlanCycle, PlanCatchUp) instead of the model's tests.
	// 0 (default) means when every node can test every other within the
	// per-node bound (n-1 <= min(TestsPerCycle, PerNode), 10 nodes by
	// default); -1 never.
	SmallCluster int
}

// DefaultTopoConfig returns the defaults documented on TopoConfig.
func DefaultTopoConfig() TopoConfig {
	return TopoConfig{OwnOffsets: 1, PairTests: 1, CrossPerSwitch: 16, CrossPerNode: 2, UncertainPerNode: 1, ExplorePerNode: 4}
}

// Validate names the first field out of bounds.
func (c TopoConfig) Validate() error {
	for _, f := range []struct {
		name    string
		v, l, h int
	}{
		{"OwnOffsets", c.OwnOffsets, 1, 8}, {"PairTests", c.PairTests, 1, 8}, {"CrossPerSwitch", c.CrossPerSwitch, 1, 1024},
		{"CrossPerNode", c.CrossPerNode, 1, 64}, {"UncertainPerNode", c.UncertainPerNode, 0, 64}, {"ExplorePerNode", c.ExplorePerNode, 1, 64},
		{"SmallCluster", c.SmallCluster, -1, 1024},
	} {
		if f.v < f.l || f.v > f.h {
			return fmt.Errorf("probe topology: %s = %d, want %d..%d", f.name, f.v, f.l, f.h)
		}
	}
	return nil
}

// PerNode is the most tests the configuration gives one node per cycle
// (before the budget's cap): own-switch, cross-switch, uncertain and
// exploration tests.
func (c TopoConfig) PerNode() int {
	return 2*c.OwnOffsets + c.CrossPerNode + c.UncertainPerNode + c.ExplorePerNode
}

func (c TopoConfig) orDefault() TopoConfig {
	if c == (TopoConfig{}) {
		return DefaultTopoConfig()
	}
	return c
}

// TopoInput is what the topology planner plans from.
type TopoInput struct {
	// Members are the live nodes with a probe server.
	Members []string
	// Switch is each member's switch (declared or inferred); "" or absent
	// is unknown.
	Switch map[string]string
	// Last is when each pair was last measured (absent or zero: never).
	Last map[Pair]time.Time
	// Uncertain are pairs the network model wants tested directly, most
	// wanted first (netmodel.Model.Disagreements).
	Uncertain []Pair
	// Retest are pairs whose latest test ran beside other traffic at an
	// end (the leader reads it from the ends' counts), for a catch-up
	// cycle to test again (PlanTopoCatchUp, RetestTries).
	Retest []Pair
	// Linked are pairs of a node whose link checks said its link changed
	// since the pairs' latest tests, for a catch-up cycle to test again
	// before Retest's, whatever their tries since the full cycle: a
	// change makes a pair's figure stale however often it was tested
	// before, and the caller bounds the tries per change. The budget's
	// cap holds for them as for Retest.
	Linked []Pair
	// Cycle numbers the cycle: it turns the ring offsets and the choice
	// of the node that stands for a switch.
	Cycle  uint64
	Budget BudgetConfig
	Config TopoConfig
	Now    time.Time
}

// TopoPlan is a cycle of the topology planner.
type TopoPlan struct {
	Plan
	// Kind counts the tests of each kind: "own", "cross", "uncertain", "explore";
	// a catch-up's also "retest" (TopoInput.Retest) and "linked" (Linked).
	Kind map[string]int
	// DeferredSwitchPairs counts the switch pairs the caps left for later
	// cycles.
	DeferredSwitchPairs int
}

// PlanTopoCycle plans one bandwidth cycle in O(n + s²) tests, s the
// number of switches, instead of PlanCycle's n(n-1)/2:
//
//   - own switch: each node against the peers OwnOffsets ring steps
//     ahead and behind on its switch, so every node of a switch with two
//     or more nodes has its link measured in every cycle;
//   - switch pairs: PairTests tests between each pair of switches, by the
//     nodes with the fewest cross tests so far (turning with the cycle),
//     stalest switch pair first, under CrossPerSwitch and CrossPerNode;
//   - uncertain pairs, under UncertainPerNode;
//   - nodes of unknown switch: ExplorePerNode tests each, alternating one
//     node of each known switch (in turn) and another unknown node.
//
// Every node stays under the budget's TestsPerCycle. Rounds are packed so
// that no node is in two tests of a round and no switch's uplink carries
// two cross-switch tests in a round (a test with a node of unknown switch
// counts as crossing its peer's uplink).
//
// A cluster small enough that every node can test every other within the
// per-node bound (n-1 <= min(TestsPerCycle, PerNode), TopoConfig.SmallCluster)
// gets PlanCycle's full tournament instead: direct tests of every pair cost
// no more than the model's bound there, and need no model.
func PlanTopoCycle(in TopoInput) TopoPlan {
	p := newTopoPlanner(in)
	if p.small() {
		plan := PlanCycle(p.members, in.Last, in.Budget, in.Now)
		kind := map[string]int{"all": len(p.members) * (len(p.members) - 1) / 2}
		if !plan.Budgeted {
			plan, kind["model_first"] = modelFirst(in, plan)
		}
		return TopoPlan{Plan: plan, Kind: kind}
	}
	p.own()
	p.cross()
	p.uncertain()
	p.explore(nil)
	return p.finish()
}

// PlanTopoCatchUp plans, between full cycles, the tests of members that
// have no measured pair yet (a node that joined since the last cycle): its
// own-switch ring neighbours, or for a node alone on its switch one node of
// other switches, or for a node of unknown switch the exploration tests. A
// pair tried CatchUpTries times (tries) waits for the next full cycle.
// The pairs of in.Linked are tested again, then those of in.Retest, each
// of these up to RetestTries times. An empty plan means nothing to catch
// up.
func PlanTopoCatchUp(in TopoInput, tries map[Pair]int) TopoPlan {
	p := newTopoPlanner(in)
	if p.small() {
		plan := planCatchUp(p.members, in.Last, tries, in.Linked, in.Retest, in.Budget, in.Now)
		return TopoPlan{Plan: plan, Kind: map[string]int{"all": len(plan.Pairs())}}
	}
	p.skip = func(q Pair) bool { return tries[q] >= CatchUpTries }
	fresh := map[string]bool{}
	for _, n := range p.members {
		fresh[n] = true
	}
	for q, at := range in.Last {
		if !at.IsZero() {
			delete(fresh, q.A)
			delete(fresh, q.B)
		}
	}
	if len(fresh) > 0 {
		p.freshTests(fresh)
	}
	p.retests(tries)
	return p.finish()
}

// retests adds the live pairs of in.Linked, then those of in.Retest that
// were tested fewer than RetestTries times, under the uplink caps and
// with what the budget leaves of the cycle after the tests since the
// full cycle began (retestCap).
func (p *topoPlanner) retests(tries map[Pair]int) {
	live := memberSet(p.members)
	spent := testsSoFar(tries)
	limit := retestCap(p.in.Budget)
	p.skip = func(q Pair) bool { return overCap(q, spent, p.load, limit) }
	for _, q := range p.in.Linked {
		if live[q.A] && live[q.B] {
			p.add(q.A, q.B, "linked")
		}
	}
	p.skip = func(q Pair) bool { return tries[q] >= RetestTries || overCap(q, spent, p.load, limit) }
	for _, q := range p.in.Retest {
		if live[q.A] && live[q.B] {
			p.add(q.A, q.B, "retest")
		}
	}
}

// retestCap is how many tests a node may take part in per cycle counting
// the re-tests of readings taken beside traffic or through a changed
// link: the budget's TestsPerCycle, not the planner's per-node bound
// (TopoConfig.PerNode). That bound sizes the tests a cycle plans; a
// re-test replaces a figure placement would otherwise read wrong until
// the next full cycle, and RetestTries and the leader's tries per link
// change bound how often. Held to the per-node bound, a node whose link
// checks read its link changed spent it on its own pairs' re-tests, and
// its pairs' readings taken beside traffic then stood to the next full
// cycle: on the queue12 testbed, n07's checks read its link faster than
// a low test of one of its pairs, the catch-ups tested n07's pairs again
// for the change up to the bound, and n07's other reading beside traffic
// was left out of every catch-up after.
func retestCap(b BudgetConfig) int { return b.TestsPerCycle() }

// overCap reports whether either node of q has reached limit tests,
// counting those it ran (spent; nil: none) and those planned (load).
func overCap(q Pair, spent, load map[string]int, limit int) bool {
	return spent[q.A]+load[q.A] >= limit || spent[q.B]+load[q.B] >= limit
}

// memberSet is members as a set.
func memberSet(members []string) map[string]bool {
	out := make(map[string]bool, len(members))
	for _, n := range members {
		out[n] = true
	}
	return out
}

// testsSoFar is each node's count of tests in tries.
func testsSoFar(tries map[Pair]int) map[string]int {
	out := make(map[string]int, len(tries))
	for q, c := range tries {
		out[q.A] += c
		out[q.B] += c
	}
	return out
}

// freshTests adds the tests that give the model a figure for each fresh
// node: its own-switch ring neighbours, for a node alone on its switch one
// node of other switches, for a node of unknown switch the exploration
// tests.
func (p *topoPlanner) freshTests(fresh map[string]bool) {
	for _, s := range p.switches {
		ms := p.groups[s]
		for i, n := range ms {
			if !fresh[n] {
				continue
			}
			if len(ms) >= 2 {
				p.add(n, ms[(i+1)%len(ms)], "own")
				p.add(n, ms[(i+len(ms)-1)%len(ms)], "own")
				continue
			}
			// Alone on its switch: its link is seen only across switches.
			for k := 0; k < len(p.switches) && p.kindLoad["cross"][n] < p.cfg.CrossPerNode; k++ {
				t := p.switches[(int(p.in.Cycle)+k)%len(p.switches)]
				if t != s {
					p.add(n, p.pick(t, "cross"), "cross")
				}
			}
		}
	}
	p.explore(fresh)
}

type topoPlanner struct {
	in       TopoInput
	cfg      TopoConfig
	cap      int
	members  []string
	sw       map[string]string
	groups   map[string][]string
	switches []string
	unknown  []string
	chosen   map[Pair]bool
	order    []Pair
	kinds    map[string]int
	load     map[string]int
	kindLoad map[string]map[string]int
	swCross  map[string]int
	deferred int
	skip     func(Pair) bool
}

func newTopoPlanner(in TopoInput) *topoPlanner {
	p := &topoPlanner{in: in, cfg: in.Config.orDefault(), members: sortedMembers(in.Members), sw: map[string]string{},
		groups: map[string][]string{}, chosen: map[Pair]bool{}, kinds: map[string]int{}, load: map[string]int{},
		kindLoad: map[string]map[string]int{}, swCross: map[string]int{}, skip: func(Pair) bool { return false }}
	p.cap = min(in.Budget.TestsPerCycle(), p.cfg.PerNode())
	for _, n := range p.members {
		s := in.Switch[n]
		if s == "" {
			p.unknown = append(p.unknown, n)
			continue
		}
		p.sw[n] = s
		p.groups[s] = append(p.groups[s], n)
	}
	for s := range p.groups {
		p.switches = append(p.switches, s)
	}
	slices.Sort(p.switches)
	return p
}

// small reports whether every member can test every other within the
// per-node bound.
func (p *topoPlanner) small() bool {
	switch {
	case p.cfg.SmallCluster < 0:
		return false
	case p.cfg.SmallCluster > 0:
		return len(p.members) <= p.cfg.SmallCluster
	}
	return len(p.members)-1 <= p.cap
}

// add schedules a-b as a test of kind when it is new and both nodes are
// under their caps.
func (p *topoPlanner) add(a, b, kind string) bool {
	if a == "" || b == "" || a == b {
		return false
	}
	q := NewPair(a, b)
	if p.chosen[q] || p.skip(q) || p.load[a] >= p.cap || p.load[b] >= p.cap {
		return false
	}
	kl := p.kindLoad[kind]
	if kl == nil {
		kl = map[string]int{}
		p.kindLoad[kind] = kl
	}
	if lim := p.kindLimit(kind); lim > 0 && (kl[a] >= lim || kl[b] >= lim) {
		return false
	}
	sa, sb := p.sw[a], p.sw[b]
	crossing := sa != sb
	if crossing {
		for _, s := range []string{sa, sb} {
			if s != "" && p.swCross[s] >= p.cfg.CrossPerSwitch {
				return false
			}
		}
		for _, s := range []string{sa, sb} {
			if s != "" {
				p.swCross[s]++
			}
		}
	}
	p.chosen[q] = true
	p.order = append(p.order, q)
	p.kinds[kind]++
	p.load[a]++
	p.load[b]++
	kl[a]++
	kl[b]++
	return true
}

func (p *topoPlanner) kindLimit(kind string) int {
	switch kind {
	case "own":
		return 2 * p.cfg.OwnOffsets
	case "cross":
		return p.cfg.CrossPerNode
	case "uncertain":
		return p.cfg.UncertainPerNode
	case "explore":
		return p.cfg.ExplorePerNode
	}
	return 0
}

func (p *topoPlanner) own() {
	for _, s := range p.switches {
		ms := p.groups[s]
		l := len(ms)
		if l < 2 {
			continue
		}
		// Offsets d and l-d give the same pairs, and d = l/2 on an even
		// switch only l/2 of them (one test per node): turn over
		// 1..(l-1)/2, which always gives every node two peers.
		k := uint64(max(1, (l-1)/2))
		for j := 0; j < p.cfg.OwnOffsets && uint64(j) < k; j++ {
			d := 1 + int((p.in.Cycle*uint64(p.cfg.OwnOffsets)+uint64(j))%k)
			for i, n := range ms {
				p.add(n, ms[(i+d)%l], "own")
			}
		}
	}
}

// pick is the member of switch s with the fewest tests of kind so far,
// the search starting at a place that turns with the cycle.
func (p *topoPlanner) pick(s, kind string) string {
	ms := p.groups[s]
	if len(ms) == 0 {
		return ""
	}
	start := int(p.in.Cycle % uint64(len(ms)))
	best := ""
	for k := range ms {
		n := ms[(start+k)%len(ms)]
		if p.load[n] >= p.cap {
			continue
		}
		if best == "" || p.kindLoad[kind][n] < p.kindLoad[kind][best] {
			best = n
		}
	}
	return best
}

func (p *topoPlanner) cross() {
	// Staleness of a switch pair: its latest measured cross pair.
	stale := map[Pair]time.Time{}
	for q, at := range p.in.Last {
		sa, sb := p.sw[q.A], p.sw[q.B]
		if sa == "" || sb == "" || sa == sb {
			continue
		}
		k := NewPair(sa, sb)
		if at.After(stale[k]) {
			stale[k] = at
		}
	}
	var pairs []Pair
	for i, s := range p.switches {
		for _, t := range p.switches[i+1:] {
			pairs = append(pairs, Pair{A: s, B: t})
		}
	}
	slices.SortStableFunc(pairs, func(x, y Pair) int { return stale[x].Compare(stale[y]) })
	for _, sp := range pairs {
		done := 0
		for k := 0; k < p.cfg.PairTests; k++ {
			if p.add(p.pick(sp.A, "cross"), p.pick(sp.B, "cross"), "cross") {
				done++
			}
		}
		if done == 0 {
			p.deferred++
		}
	}
}

func (p *topoPlanner) uncertain() {
	live := memberSet(p.members)
	for _, q := range p.in.Uncertain {
		if live[q.A] && live[q.B] {
			p.add(q.A, q.B, "uncertain")
		}
	}
}

// explore gives each node of unknown switch (only those in only, when set)
// tests alternately against known switches (one node of each switch in
// turn, then a second node of each, so the majority linkage has more than
// one pair to weigh) and against other unknown nodes (ring offsets that
// turn with the cycle).
func (p *topoPlanner) explore(only map[string]bool) {
	nu := len(p.unknown)
	ns := len(p.switches)
	for ui, u := range p.unknown {
		if only != nil && !only[u] {
			continue
		}
		var known []string // one node of each switch, then a second...
		for k := 0; len(known) < 2*p.cfg.ExplorePerNode && k < p.cfg.ExplorePerNode; k++ {
			for j := range ns {
				ms := p.groups[p.switches[(int(p.in.Cycle)+ui+j)%ns]]
				if k < len(ms) {
					known = append(known, ms[(int(p.in.Cycle)+ui+k)%len(ms)])
				}
			}
		}
		var others []string
		for k := 0; k < nu-1 && k < 2*p.cfg.ExplorePerNode; k++ {
			others = append(others, p.unknown[(ui+1+(int(p.in.Cycle)+k)%(nu-1))%nu])
		}
		for ki, oi := 0, 0; p.kindLoad["explore"][u] < p.cfg.ExplorePerNode && (ki < len(known) || oi < len(others)); {
			if ki < len(known) && (oi >= len(others) || ki <= oi) {
				p.add(u, known[ki], "explore")
				ki++
				continue
			}
			p.add(u, others[oi], "explore")
			oi++
		}
	}
}

// finish packs the chosen tests into rounds (pack).
func (p *topoPlanner) finish() TopoPlan {
	tp := TopoPlan{Plan: Plan{At: p.in.Now}, Kind: p.kinds, DeferredSwitchPairs: p.deferred}
	if len(p.order) == 0 {
		return tp
	}
	tp.Rounds = p.pack(p.order)
	for _, c := range p.load {
		tp.TestsPerNode = max(tp.TestsPerNode, c)
	}
	tp.Budgeted = p.cap < p.cfg.PerNode()
	return tp
}

// pack puts tests into rounds: cross-switch and exploration tests first
// (the uplinks are the scarce resource), each into the first round where
// neither node nor either uplink is busy.
func (p *topoPlanner) pack(order []Pair) [][]Pair {
	uplink := func(n string) string {
		if s := p.sw[n]; s != "" {
			return "s:" + s
		}
		return "n:" + n // a node of unknown switch: its own link stands for its uplink
	}
	crossing := func(q Pair) bool { return p.sw[q.A] == "" || p.sw[q.B] == "" || p.sw[q.A] != p.sw[q.B] }
	tests := slices.Clone(order)
	slices.SortStableFunc(tests, func(x, y Pair) int {
		bx, by := 1, 1
		if crossing(x) {
			bx = 0
		}
		if crossing(y) {
			by = 0
		}
		return cmp.Compare(bx, by)
	})
	busy := map[string][]bool{} // node or uplink → rounds in use
	isBusy := func(k string, r int) bool { b := busy[k]; return r < len(b) && b[r] }
	mark := func(k string, r int) {
		b := busy[k]
		for len(b) <= r {
			b = append(b, false)
		}
		b[r] = true
		busy[k] = b
	}
	var rounds [][]Pair
	for _, q := range tests {
		keys := []string{q.A, q.B}
		if crossing(q) {
			keys = append(keys, uplink(q.A), uplink(q.B))
		}
		r := 0
		for ; r < len(rounds); r++ {
			free := true
			for _, k := range keys {
				free = free && !isBusy(k, r)
			}
			if free {
				break
			}
		}
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], q)
		for _, k := range keys {
			mark(k, r)
		}
	}
	for _, r := range rounds {
		slices.SortFunc(r, comparePairs)
	}
	return rounds
}
