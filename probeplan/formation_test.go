package probeplan

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// modelCovered reports after how many rounds of plan every node has an
// own-switch test (or is alone on its switch) and every switch pair a
// test: what the network model needs to give every pair a figure.
func modelCovered(plan Plan, sw map[string]string) int {
	size := map[string]int{}
	for _, s := range sw {
		size[s]++
	}
	own := map[string]bool{}
	pairs := map[Pair]bool{}
	var switches []string
	for s := range size {
		switches = append(switches, s)
	}
	want := len(switches) * (len(switches) - 1) / 2
	for r, round := range plan.Rounds {
		for _, p := range round {
			if sw[p.A] == sw[p.B] {
				own[p.A], own[p.B] = true, true
			} else {
				pairs[NewPair(sw[p.A], sw[p.B])] = true
			}
		}
		done := len(pairs) == want
		for n, s := range sw {
			done = done && (own[n] || size[s] < 2)
		}
		if done {
			return r + 1
		}
	}
	return -1
}

// A fresh 10-node cluster on three switches (the testbed's bulk10 shape):
// the full tournament still tests every pair once, but the model's tests
// come first, so the model covers every node within 3 rounds instead of
// whenever the circle method reaches them.
func TestPlanTopoCycle_SmallClusterModelFirst(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, sw := topoCluster(4, 4, 2)
	in := TopoInput{Members: m, Switch: sw, Budget: DefaultBudgetConfig(), Now: t0, Cycle: 1}
	plan := PlanTopoCycle(in)
	if got := len(plan.Pairs()); got != 45 {
		t.Fatalf("%d tests, want all 45 pairs", got)
	}
	seen := map[Pair]bool{}
	for r, round := range plan.Rounds {
		busy := map[string]bool{}
		for _, p := range round {
			if seen[p] || busy[p.A] || busy[p.B] {
				t.Fatalf("round %d: %v twice in the cycle or a node in two tests", r, p)
			}
			seen[p], busy[p.A], busy[p.B] = true, true, true
		}
	}
	if plan.Kind["model_first"] != 4+4+1+3 {
		t.Fatalf("model's tests first: %d, want 12 (4+4+1 own-switch ring pairs, 3 switch pairs): %v", plan.Kind["model_first"], plan.Kind)
	}
	if r := modelCovered(plan.Plan, sw); r < 1 || r > 3 {
		t.Fatalf("the model covers the cluster after %d rounds, want <= 3: %v", r, plan.Rounds)
	}
	plain := PlanCycle(m, nil, in.Budget, t0)
	if r := modelCovered(plain, sw); r <= 3 {
		t.Fatalf("the plain tournament covers the model after %d rounds: this test would not tell", r)
	}
	if len(plan.Rounds) > len(plain.Rounds)+3 {
		t.Fatalf("%d rounds, the plain tournament %d: the cycle grew by more than the model's rounds", len(plan.Rounds), len(plain.Rounds))
	}

	// Once the model's tests are measured, the tournament is the plain one.
	last := map[Pair]time.Time{}
	for _, p := range plan.Pairs() {
		last[p] = t0
	}
	in.Last, in.Cycle = last, 2
	if next := PlanTopoCycle(in); !reflect.DeepEqual(next.Rounds, PlanCycle(m, last, in.Budget, t0).Rounds) || next.Kind["model_first"] != 0 {
		t.Fatalf("measured cluster: rounds reordered (%v)", next.Kind)
	}
	// No switch known: nothing to put first.
	in.Switch, in.Last = nil, nil
	if p := PlanTopoCycle(in); !reflect.DeepEqual(p.Rounds, PlanCycle(m, nil, in.Budget, t0).Rounds) {
		t.Fatal("no switches: rounds reordered")
	}
}

// A node that joins while a cycle runs gets its model tests merged into
// the rounds left, without a node or uplink in two tests of a round.
func TestPlanJoinersMergeTests(t *testing.T) {
	t.Parallel()
	m, sw := topoCluster(4, 4, 2)
	joiner := m[3] // s00n003
	var old []string
	for _, n := range m {
		if n != joiner {
			old = append(old, n)
		}
	}
	rounds := Orient(PlanCycle(old, nil, DefaultBudgetConfig(), time.Time{}).Rounds, 1)
	tests := PlanJoiners(TopoInput{Members: m, Switch: sw, Budget: DefaultBudgetConfig(), Cycle: 1}, []string{joiner})
	if len(tests) != 2 {
		t.Fatalf("joiner on a 4-node switch: %v, want its two ring neighbours", tests)
	}
	for _, p := range tests {
		if (p.A != joiner && p.B != joiner) || sw[p.A] != sw[p.B] {
			t.Fatalf("joiner's test %v is not an own-switch test of %s", p, joiner)
		}
	}
	cur := 2
	merged := MergeTests(rounds, cur, tests, sw, 1)
	n := 0
	for _, r := range rounds[cur+1:] {
		n += len(r)
	}
	got := 0
	for r, round := range merged {
		busy := map[string]bool{}
		for _, d := range round {
			got++
			if busy[d.From] || busy[d.To] {
				t.Fatalf("round %d: a node of %v in two tests", r, d)
			}
			busy[d.From], busy[d.To] = true, true
		}
	}
	if got != n+2 {
		t.Fatalf("%d tests after merging, want the %d left and the joiner's 2", got, n)
	}
}

// A small cluster's full tournament holds re-tests to the budget alone
// (not TopoConfig.PerNode), counting the tests since the cycle began and
// those still to come; a pair still to come is left to its round.
func TestRetestsInCycle_SmallCluster(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	members := []string{"a", "b", "c", "d"}
	last := map[Pair]time.Time{
		NewPair("a", "b"): t0.Add(time.Second), NewPair("c", "d"): t0.Add(time.Second),
		NewPair("a", "c"): t0.Add(-time.Hour), // the cycle before: not counted
	}
	rounds := [][]Duty{{{From: "a", To: "b"}, {From: "c", To: "d"}}, {{From: "a", To: "c"}}, {{From: "b", To: "d"}}}
	in := TopoInput{Members: members, Last: last, Now: t0,
		Retest: []Pair{{A: "b", B: "d"}, {A: "d", B: "c"}, {A: "b", B: "a"}, {A: "a", B: "x"}},
		Budget: BudgetConfig{BytesPerHour: 36 << 20, TestBytes: 1 << 20, CycleInterval: 5 * time.Minute}} // 3 a cycle
	got := RetestsInCycle(in, t0, rounds, 1, nil)
	// b-d comes in round 2; c-d: c has 2 (c-d done, a-c to come), d 2 (c-d, b-d): both under 3;
	// then a-b: a has a-b and a-c, b has a-b and b-d; x is no member.
	want := []Pair{{A: "c", B: "d"}, {A: "a", B: "b"}}
	if !slices.Equal(got, want) {
		t.Fatalf("RetestsInCycle = %v, want %v", got, want)
	}
	// a re-tested a-b once already this cycle: the rows show that pair once.
	if got := RetestsInCycle(in, t0, rounds, 1, map[string]int{"a": 1, "b": 1}); !slices.Equal(got, want[:1]) {
		t.Fatalf("with a-b's re-test counted: %v, want %v", got, want[:1])
	}
	// The round under way counts: with a-c under way rather than to come
	// next, c is still at 2 of 3 and d too, so c-d is picked; with a
	// second test of c in it, c is at the cap.
	under := [][]Duty{{{From: "a", To: "b"}, {From: "c", To: "d"}}, {{From: "a", To: "c"}}, {{From: "b", To: "d"}}}
	if got := RetestsInCycle(in, t0, under, 1, map[string]int{"c": 1}); len(got) != 1 || got[0] != (Pair{A: "a", B: "b"}) {
		t.Fatalf("c at 3 with the round under way: %v, want only a-b", got)
	}
	in.Budget.BytesPerHour = 24 << 20 // 2 a cycle: everyone is at the cap
	if got := RetestsInCycle(in, t0, rounds, 1, nil); len(got) != 0 {
		t.Fatalf("at the cap: %v, want none", got)
	}
}

// A preempting test takes the next round; what it collides with there (a
// node, or an uplink when it crosses switches) moves to the first later
// round with room, else to a new round; the rest of that round stays.
func TestPreemptTests(t *testing.T) {
	t.Parallel()
	sw := map[string]string{"a1": "a", "a2": "a", "a3": "a", "a4": "a", "b1": "b", "b2": "b"}
	rounds := [][]Duty{
		{{From: "a1", To: "a2"}},                         // done
		{{From: "a3", To: "a4"}},                         // under way
		{{From: "a1", To: "a3"}, {From: "a2", To: "b1"}}, // next
		{{From: "a1", To: "a4"}, {From: "a2", To: "a3"}},
	}
	// a4-b2 crosses: it takes the uplinks a and b, so a2->b1 (same uplinks)
	// moves; a1-a3 shares no node or uplink and stays. a2->b1 fits nowhere
	// later (a2 tests in round 3 too): a round is appended.
	got := PreemptTests(rounds, 1, []Pair{{A: "a4", B: "b2"}}, sw, 0)
	want := [][]Duty{
		{{From: "a1", To: "a3"}, {From: "a4", To: "b2"}},
		{{From: "a1", To: "a4"}, {From: "a2", To: "a3"}},
		{{From: "a2", To: "b1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("PreemptTests = %v, want %v", got, want)
	}
	// Odd cycles run a pair the other way; a node collision moves the
	// duty to the next round with room.
	got = PreemptTests(rounds, 1, []Pair{{A: "a3", B: "b2"}}, sw, 1)
	want = [][]Duty{
		{{From: "b2", To: "a3"}},
		{{From: "a1", To: "a4"}, {From: "a2", To: "a3"}},
		{{From: "a1", To: "a3"}, {From: "a2", To: "b1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("odd cycle: PreemptTests = %v, want %v", got, want)
	}
	// Two re-tests of one node: the second takes the round after the
	// first's instead of pushing it out.
	got = PreemptTests(rounds, 1, []Pair{{A: "a1", B: "b2"}, {A: "a1", B: "a2"}}, sw, 0)
	want = [][]Duty{
		{{From: "a1", To: "b2"}},
		{{From: "a1", To: "a2"}},
		{{From: "a1", To: "a3"}, {From: "a2", To: "b1"}},
		{{From: "a1", To: "a4"}, {From: "a2", To: "a3"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("two re-tests of a1: PreemptTests = %v, want %v", got, want)
	}
	if got := PreemptTests(nil, 0, []Pair{{A: "a1", B: "a2"}}, sw, 0); !reflect.DeepEqual(got, [][]Duty{{{From: "a1", To: "a2"}}}) {
		t.Fatalf("no rounds left: %v, want the test in a round of its own", got)
	}
}
