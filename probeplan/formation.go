package probeplan

import (
	"maps"
	"math"
	"time"
)

// The network model first, for the cold start: a job placed by netload
// right after a cluster forms needs each node's link and each switch
// pair's capacity, not every pair. These plan those tests ahead of the
// rest, so that the model covers the cluster within a few rounds.

// modelFirst reorders a small cluster's full tournament (PlanTopoCycle's
// small-cluster branch) so that the tests the network model needs and has
// not measured yet run first: each node against its own-switch ring
// neighbours, one test per switch pair, packed so that no uplink carries
// two tests in a round. The other pairs follow in as few rounds as the
// tournament allows. With no switch known, or with the model's tests all
// measured (every cycle but the first), the plan is returned unchanged;
// n is how many tests went first.
func modelFirst(in TopoInput, plan Plan) (Plan, int) {
	p := newTopoPlanner(in)
	if len(p.switches) == 0 {
		return plan, 0
	}
	p.cap = math.MaxInt // every pair is in the tournament anyway
	p.own()
	p.cross()
	in2 := map[Pair]bool{}
	for _, q := range plan.Pairs() {
		in2[q] = true
	}
	var first []Pair
	taken := map[Pair]bool{}
	for _, q := range p.order {
		if in2[q] && in.Last[q].IsZero() {
			first = append(first, q)
			taken[q] = true
		}
	}
	if len(first) == 0 {
		return plan, 0
	}
	var rest []Pair
	for _, q := range plan.Pairs() {
		if !taken[q] {
			rest = append(rest, q)
		}
	}
	rounds := p.pack(first)
	if len(rest) > 0 {
		rounds = append(rounds, shortestRounds(p.members, rest, nil)...)
	}
	plan.Rounds = rounds
	return plan, len(first)
}

// PlanJoiners plans the model's tests of members that joined while a
// cycle is under way (fresh: no measured pair, no test in what is left of
// the cycle): its own-switch ring neighbours, for a node alone on its
// switch one node of other switches, for a node of unknown switch the
// exploration tests, whatever the cluster's size (a small cluster's
// joiner gets its other pairs in the next full cycle; the model covers
// them meanwhile). Without it a node that joins a forming cluster after
// the first cycle was planned stays unmeasured until that cycle ends
// (a minute on ten nodes), and placement blind to it. The tests are
// unordered pairs; MergeTests puts them into the cycle's rounds.
func PlanJoiners(in TopoInput, fresh []string) []Pair {
	in.Config = in.Config.orDefault()
	in.Config.SmallCluster = -1
	p := newTopoPlanner(in)
	only := map[string]bool{}
	for _, n := range fresh {
		only[n] = true
	}
	p.freshTests(only)
	return p.order
}

// MergeTests returns the rounds after round cur of a cycle with tests
// added: each, in order, into the first of those rounds where neither of
// its nodes is busy and, for a cross-switch test (sw: each node's switch,
// "" unknown), neither uplink carries another cross-switch test; rounds
// are appended for the tests that fit nowhere. A test runs from its
// pair's A to B in even cycles and the other way in odd ones (Orient).
func MergeTests(rounds [][]Duty, cur int, tests []Pair, sw map[string]string, cycle uint64) [][]Duty {
	k := newPacker(rounds, cur, sw)
	for _, oriented := range Orient([][]Pair{tests}, cycle) {
		for _, d := range oriented {
			k.place(d, 0)
		}
	}
	return k.out
}

// PreemptTests is MergeTests with tests that go first: each into the
// first round after cur where it meets no test placed before it, and the
// duties of that round it collides with (a node, or an uplink for a
// cross-switch test) move on to the first later round with room, or to
// an appended one. In a small cluster's full tournament every node tests
// in almost every round, so a merged test would wait for the cycle's end;
// a re-test must run while what it re-measures still holds. The callers
// leave out a pair the rounds already test (RetestsInCycle).
func PreemptTests(rounds [][]Duty, cur int, tests []Pair, sw map[string]string, cycle uint64) [][]Duty {
	k := newPacker(rounds, cur, sw)
	type move struct {
		d    Duty
		from int
	}
	var moved []move
	var first []map[string]bool // per round, what the tests placed here hold
	for _, oriented := range Orient([][]Pair{tests}, cycle) {
		for _, d := range oriented {
			r := firstFree(first, k.keys(d), 0)
			for len(first) <= r {
				first = append(first, map[string]bool{})
			}
			for _, x := range k.evict(r, d) {
				moved = append(moved, move{x, r + 1})
			}
			k.place(d, r)
			for _, key := range k.keys(d) {
				first[r][key] = true
			}
		}
	}
	for _, m := range moved {
		k.place(m.d, m.from)
	}
	return k.out
}

// packer fills the rounds left of a cycle: out holds them, busy each
// one's taken nodes and uplinks.
type packer struct {
	out  [][]Duty
	busy []map[string]bool
	sw   map[string]string
}

func newPacker(rounds [][]Duty, cur int, sw map[string]string) *packer {
	k := &packer{sw: sw}
	for i := max(cur+1, 0); i < len(rounds); i++ {
		k.out = append(k.out, append([]Duty(nil), rounds[i]...))
		b := map[string]bool{}
		for _, d := range rounds[i] {
			for _, key := range k.keys(d) {
				b[key] = true
			}
		}
		k.busy = append(k.busy, b)
	}
	return k
}

// keys are what d occupies in its round: its nodes and, when it crosses
// switches (or a node's switch is unknown), both ends' uplinks.
func (k *packer) keys(d Duty) []string {
	a, b := d.From, d.To
	out := []string{"n:" + a, "n:" + b}
	if k.sw[a] == "" || k.sw[b] == "" || k.sw[a] != k.sw[b] {
		for _, n := range []string{a, b} {
			if s := k.sw[n]; s != "" {
				out = append(out, "s:"+s)
			} else {
				out = append(out, "n:"+n)
			}
		}
	}
	return out
}

// place puts d into the first round from from on where its keys are
// free, appending a round when none is.
func (k *packer) place(d Duty, from int) {
	ks := k.keys(d)
	r := firstFree(k.busy, ks, from)
	for len(k.out) <= r {
		k.out = append(k.out, nil)
		k.busy = append(k.busy, map[string]bool{})
	}
	k.out[r] = append(k.out[r], d)
	for _, key := range ks {
		k.busy[r][key] = true
	}
}

// firstFree is the first round from from on whose taken keys (busy, one
// set per round) hold none of keys: len(busy) when none is free.
func firstFree(busy []map[string]bool, keys []string, from int) int {
	r := from
	for ; r < len(busy); r++ {
		free := true
		for _, key := range keys {
			free = free && !busy[r][key]
		}
		if free {
			break
		}
	}
	return r
}

// evict takes out of round r the duties that share a key with d and
// returns them.
func (k *packer) evict(r int, d Duty) []Duty {
	if r >= len(k.out) {
		return nil
	}
	want := map[string]bool{}
	for _, key := range k.keys(d) {
		want[key] = true
	}
	var keep, gone []Duty
	for _, x := range k.out[r] {
		hit := false
		for _, key := range k.keys(x) {
			hit = hit || want[key]
		}
		if hit {
			gone = append(gone, x)
		} else {
			keep = append(keep, x)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	k.out[r] = keep
	k.busy[r] = map[string]bool{}
	for _, x := range keep {
		for _, key := range k.keys(x) {
			k.busy[r][key] = true
		}
	}
	return gone
}

// RetestsInCycle picks the pairs of in.Retest to test again within the
// cycle under way, which began at since (the rounds left: rounds from
// round cur, the one under way), for PreemptTests to put into them:
// a reading taken beside a job is tested again a round or two after the
// job has gone, not after the cycle's last round (a minute on ten nodes,
// longer on large clusters, and placement reads the low figure
// meanwhile). A pair the rounds left test anyway is left to them, and
// each node stays under the budget's tests per cycle (retestCap, not the
// planner's per-node bound), counting its pairs in.Last shows tested
// since the cycle began and its tests in the rounds left. (The rounds as
// recorded are no count of the cycle's tests: a cycle extended under way
// keeps only the rounds left.) in.Last holds a pair's latest test only,
// so a pair tested again since the cycle began counts once there: again
// adds, per node, the re-tests it ran this cycle. Pairs of nodes that are
// not members are left out. The order is in.Retest's.
func RetestsInCycle(in TopoInput, since time.Time, rounds [][]Duty, cur int, again map[string]int) []Pair {
	if len(in.Retest) == 0 {
		return nil
	}
	p := newTopoPlanner(in)
	limit := retestCap(in.Budget)
	load := maps.Clone(again)
	if load == nil {
		load = map[string]int{}
	}
	for q, at := range in.Last {
		if !at.Before(since) {
			load[q.A]++
			load[q.B]++
		}
	}
	coming := map[Pair]bool{}
	for i := max(cur, 0); i < len(rounds); i++ {
		for _, d := range rounds[i] {
			load[d.From]++
			load[d.To]++
			coming[NewPair(d.From, d.To)] = true
		}
	}
	live := memberSet(p.members)
	var out []Pair
	picked := map[Pair]bool{}
	for _, q := range in.Retest {
		q = NewPair(q.A, q.B)
		if picked[q] || coming[q] || !live[q.A] || !live[q.B] || overCap(q, nil, load, limit) {
			continue
		}
		picked[q] = true
		load[q.A]++
		load[q.B]++
		out = append(out, q)
	}
	return out
}
