package probeplan

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Pair is an unordered pair of nodes, stored with A < B so that it can key
// a map whichever end measured it.
type Pair struct{ A, B string }

// NewPair orders a and b.
func NewPair(a, b string) Pair {
	if b < a {
		a, b = b, a
	}
	return Pair{A: a, B: b}
}

func comparePairs(x, y Pair) int {
	return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
}

// sortedMembers returns members sorted and without duplicates, so that
// every node computes the same schedule from the same membership.
func sortedMembers(members []string) []string {
	m := slices.Clone(members)
	slices.Sort(m)
	return slices.Compact(m)
}

// Rounds is a round-robin tournament over members by the circle method
// (seed 002 §4: n-1 rounds of n/2 pairs): every pair meets exactly once,
// and no node is in two pairs of one round, so a bandwidth test never
// shares a node's link with another test. For odd n a phantom "bye" is
// added, giving n rounds in each of which one node rests. Members are
// sorted and deduplicated first; the result is deterministic. Fewer than
// two members give no rounds.
func Rounds(members []string) [][]Pair {
	m := sortedMembers(members)
	if len(m) < 2 {
		return nil
	}
	const bye = -1
	idx := make([]int, len(m), len(m)+1)
	for i := range idx {
		idx[i] = i
	}
	if len(idx)%2 == 1 {
		idx = append(idx, bye)
	}
	k := len(idx)
	rounds := make([][]Pair, 0, k-1)
	for r := 0; r < k-1; r++ {
		round := make([]Pair, 0, k/2)
		for i := 0; i < k/2; i++ {
			a, b := idx[i], idx[k-1-i]
			if a == bye || b == bye {
				continue
			}
			round = append(round, NewPair(m[a], m[b]))
		}
		slices.SortFunc(round, comparePairs)
		rounds = append(rounds, round)
		// Keep idx[0] fixed and rotate the rest one step: the circle.
		lastIdx := idx[k-1]
		copy(idx[2:], idx[1:k-1])
		idx[1] = lastIdx
	}
	return rounds
}

// Plan is one measurement cycle.
type Plan struct {
	// At is when the cycle starts (PlanCycle's now); duties recorded in
	// raft carry it so that a node can tell this cycle from the last.
	At time.Time
	// Rounds run one after another; within a round every node is in at
	// most one test.
	Rounds [][]Pair
	// TestsPerNode is the most tests any node may take part in this cycle:
	// n-1 when the budget allows a full tournament.
	TestsPerNode int
	// Budgeted is true when the budget left pairs out of this cycle.
	Budgeted bool
	// Deferred are the pairs of current members left for later cycles,
	// stalest first. Together with Rounds they cover every pair.
	Deferred []Pair
}

// Pairs lists every pair the plan measures, round by round.
func (p Plan) Pairs() []Pair {
	var out []Pair
	for _, r := range p.Rounds {
		out = append(out, r...)
	}
	return out
}

// PlanCycle plans one bandwidth cycle over the live members. last holds
// when each pair was last measured (absent or zero: never); pairs of nodes
// no longer members are ignored. now is when the cycle starts (Plan.At);
// staleness is relative, so it does not change which pairs are chosen.
//
// Without a binding budget it returns the full tournament, its rounds
// ordered so that the round holding the stalest pair runs first (a cycle
// cut short by a membership change has then done the most useful work).
// With one, each node takes part in at most budget.TestsPerCycle() tests:
// pairs are taken stalest first (never measured before all others), a
// pair only while both its nodes are under the cap, and the chosen pairs
// are packed into rounds with no node twice in a round.
func PlanCycle(members []string, last map[Pair]time.Time, budget BudgetConfig, now time.Time) Plan {
	m := sortedMembers(members)
	n := len(m)
	if n < 2 {
		return Plan{At: now}
	}
	staleness := func(p Pair) time.Time { return last[p] } // zero = never
	byStaleness := func(x, y Pair) int {
		return cmp.Or(staleness(x).Compare(staleness(y)), comparePairs(x, y))
	}
	oldest := func(round []Pair) Pair { return slices.MinFunc(round, byStaleness) }

	limit := budget.TestsPerCycle()
	if limit <= 0 || limit >= n-1 {
		rounds := Rounds(m)
		slices.SortStableFunc(rounds, func(x, y []Pair) int { return byStaleness(oldest(x), oldest(y)) })
		return Plan{At: now, Rounds: rounds, TestsPerNode: n - 1}
	}

	all := make([]Pair, 0, n*(n-1)/2)
	for i := range m {
		for j := i + 1; j < n; j++ {
			all = append(all, Pair{A: m[i], B: m[j]})
		}
	}
	slices.SortFunc(all, byStaleness)
	load := make(map[string]int, n)
	var picked, deferred []Pair
	for _, p := range all {
		if load[p.A] < limit && load[p.B] < limit {
			load[p.A]++
			load[p.B]++
			picked = append(picked, p)
			continue
		}
		deferred = append(deferred, p)
	}
	rounds := shortestRounds(m, picked, func(x, y []Pair) int { return byStaleness(oldest(x), oldest(y)) })
	return Plan{At: now, Rounds: rounds, TestsPerNode: limit, Budgeted: true, Deferred: deferred}
}

// shortestRounds packs picked (pairs of members m) into rounds: first fit
// in the order given, or the tournament restricted to them, whichever
// needs fewer rounds. The restricted tournament never needs more than n-1;
// first fit is usually far fewer when few pairs are picked but can exceed
// it when most are. order, when set, sorts the tournament's rounds.
func shortestRounds(m []string, picked []Pair, order func(x, y []Pair) int) [][]Pair {
	rounds := packRounds(picked)
	chosen := make(map[Pair]bool, len(picked))
	for _, p := range picked {
		chosen[p] = true
	}
	if alt := filterRounds(Rounds(m), chosen); len(alt) < len(rounds) {
		if order != nil {
			slices.SortStableFunc(alt, order)
		}
		rounds = alt
	}
	return rounds
}

// packRounds puts each pair, in order, into the first round where neither
// node is busy yet, so the stalest pairs land in the earliest rounds.
func packRounds(pairs []Pair) [][]Pair {
	var rounds [][]Pair
	var busy []map[string]bool
	for _, p := range pairs {
		r := 0
		for r < len(rounds) && (busy[r][p.A] || busy[r][p.B]) {
			r++
		}
		if r == len(rounds) {
			rounds = append(rounds, nil)
			busy = append(busy, map[string]bool{})
		}
		rounds[r] = append(rounds[r], p)
		busy[r][p.A], busy[r][p.B] = true, true
	}
	return rounds
}

// filterRounds keeps only the chosen pairs of a tournament, dropping
// rounds left empty.
func filterRounds(rounds [][]Pair, chosen map[Pair]bool) [][]Pair {
	var out [][]Pair
	for _, r := range rounds {
		var keep []Pair
		for _, p := range r {
			if chosen[p] {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			out = append(out, keep)
		}
	}
	return out
}

// Unmeasured lists the pairs of current members that have never been
// measured (absent or zero time in last), sorted. The placement and
// `shoal net` show these as unmeasured instead of guessing a value.
func Unmeasured(members []string, last map[Pair]time.Time) []Pair {
	m := sortedMembers(members)
	var out []Pair
	for i := range m {
		for j := i + 1; j < len(m); j++ {
			p := Pair{A: m[i], B: m[j]}
			if last[p].IsZero() {
				out = append(out, p)
			}
		}
	}
	return out
}

// CatchUpTries is how many times a pair is tested between two full
// cycles before it waits for the next full one: the test that failed,
// and one retry in a catch-up cycle.
const CatchUpTries = 2

// RetestTries is how many times a pair whose latest test ran beside
// other traffic (TopoInput.Retest) is tested between two full cycles,
// the full cycle's test included: a test that shared a link with a job
// reads the job's share, and another a little later may find the link
// quiet. Bounded, so a pair under a flow that lasts gets at most two more
// tests a cycle after the full cycle's (three when the full cycle did not
// test it), not one every round.
const RetestTries = 3

// PlanCatchUp plans a short cycle for the pairs of live members that have
// never been measured and that the cycles since the last full one have
// tested fewer than CatchUpTries times (tries): the pairs of nodes that
// joined after the last full cycle started, and a test that failed once.
// Without it a node that joins a formed cluster stays unmeasured, and
// placement blind to its links, until the next full cycle,
// BandwidthInterval (5 min by default) away. A pair that keeps failing
// waits for the next full cycle, so a broken link is not retested every
// round. The budget's per-node cap applies as in PlanCycle. An empty plan
// means nothing to catch up.
//
// retest are pairs to test again because their latest test ran beside
// other traffic (TopoInput.Retest), each while tried fewer than
// RetestTries times, and only with what the budget leaves of the cycle:
// a node's tests since the full cycle began (tries) count against it.
func PlanCatchUp(members []string, last map[Pair]time.Time, tries map[Pair]int, retest []Pair, budget BudgetConfig, now time.Time) Plan {
	return planCatchUp(members, last, tries, nil, retest, budget, now)
}

// planCatchUp is PlanCatchUp with the pairs of linked (TopoInput.Linked)
// tested before those of retest, whatever their tries since the full
// cycle: the caller bounds them per link change. They too get only what
// the budget leaves of the cycle.
func planCatchUp(members []string, last map[Pair]time.Time, tries map[Pair]int, linked, retest []Pair, budget BudgetConfig, now time.Time) Plan {
	m := sortedMembers(members)
	limit := budget.TestsPerCycle()
	load := make(map[string]int, len(m))
	live := memberSet(m)
	var picked []Pair
	chosen := map[Pair]bool{}
	var spent map[string]int // nil: joiners are not held to the tests already run
	pick := func(p Pair, maxTries int) {
		if chosen[p] || !live[p.A] || !live[p.B] || tries[p] >= maxTries || (limit > 0 && overCap(p, spent, load, limit)) {
			return
		}
		load[p.A]++
		load[p.B]++
		chosen[p] = true
		picked = append(picked, p)
	}
	for _, p := range Unmeasured(m, last) {
		pick(p, CatchUpTries)
	}
	spent = testsSoFar(tries)
	for _, p := range linked {
		pick(NewPair(p.A, p.B), math.MaxInt)
	}
	for _, p := range retest {
		pick(NewPair(p.A, p.B), RetestTries)
	}
	if len(picked) == 0 {
		return Plan{At: now}
	}
	per := 0
	for _, c := range load {
		per = max(per, c)
	}
	return Plan{At: now, Rounds: shortestRounds(m, picked, nil), TestsPerNode: per, Budgeted: limit < len(m)-1}
}
