package probeplan

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

func nodeNames(n int) []string {
	m := make([]string, n)
	for i := range m {
		m[i] = fmt.Sprintf("n%02d", i)
	}
	return m
}

// checkRounds asserts the tournament properties against a naive reference:
// the set of all pairs of members.
func checkRounds(t *testing.T, members []string, rounds [][]Pair, wantEvery bool) map[Pair]int {
	t.Helper()
	seen := map[Pair]int{}
	for r, round := range rounds {
		busy := map[string]bool{}
		for _, p := range round {
			if !(p.A < p.B) {
				t.Fatalf("round %d: pair %v not ordered", r, p)
			}
			if busy[p.A] || busy[p.B] {
				t.Fatalf("round %d: a node of %v is in two tests", r, p)
			}
			busy[p.A], busy[p.B] = true, true
			seen[p]++
		}
	}
	for p, c := range seen {
		if c != 1 {
			t.Fatalf("pair %v scheduled %d times", p, c)
		}
	}
	if wantEvery {
		for i := range members {
			for j := i + 1; j < len(members); j++ {
				if seen[NewPair(members[i], members[j])] != 1 {
					t.Fatalf("pair %s-%s missing", members[i], members[j])
				}
			}
		}
	}
	return seen
}

func TestRounds_Tournament(t *testing.T) {
	t.Parallel()
	for n := 2; n <= 64; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			m := nodeNames(n)
			rounds := Rounds(m)
			wantRounds, wantPerRound := n-1, n/2
			if n%2 == 1 {
				wantRounds = n
			}
			if len(rounds) != wantRounds {
				t.Fatalf("%d rounds, want %d", len(rounds), wantRounds)
			}
			for r, round := range rounds {
				if len(round) != wantPerRound {
					t.Fatalf("round %d has %d pairs, want %d", r, len(round), wantPerRound)
				}
			}
			seen := checkRounds(t, m, rounds, true)
			if len(seen) != n*(n-1)/2 {
				t.Fatalf("%d pairs, want %d", len(seen), n*(n-1)/2)
			}
		})
	}
}

func TestRounds_SmallAndDeterministic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		members []string
		want    [][]Pair
	}{
		{name: "empty", members: nil, want: nil},
		{name: "one", members: []string{"a"}, want: nil},
		{name: "duplicates collapse", members: []string{"b", "a", "b"}, want: [][]Pair{{{"a", "b"}}}},
		{name: "three with byes", members: []string{"c", "a", "b"},
			want: [][]Pair{{{"b", "c"}}, {{"a", "c"}}, {{"a", "b"}}}},
		{name: "four", members: []string{"d", "c", "b", "a"},
			want: [][]Pair{{{"a", "d"}, {"b", "c"}}, {{"a", "c"}, {"b", "d"}}, {{"a", "b"}, {"c", "d"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Rounds(tt.members)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Rounds(%q) = %v, want %v", tt.members, got, tt.want)
			}
			shuffled := slices.Clone(tt.members)
			slices.Reverse(shuffled)
			if again := Rounds(shuffled); !reflect.DeepEqual(again, got) {
				t.Errorf("order of members changed the schedule: %v vs %v", again, got)
			}
		})
	}
}

var unlimited = BudgetConfig{TestBytes: 4 << 20, CycleInterval: 5 * time.Minute}

func TestPlanCycle_Unbudgeted(t *testing.T) {
	t.Parallel()
	for n := 2; n <= 64; n++ {
		m := nodeNames(n)
		plan := PlanCycle(m, nil, unlimited, t0)
		if plan.Budgeted || len(plan.Deferred) != 0 || plan.TestsPerNode != n-1 || !plan.At.Equal(t0) {
			t.Fatalf("n=%d: %+v", n, plan)
		}
		wantRounds := n - 1
		if n%2 == 1 {
			wantRounds = n
		}
		if len(plan.Rounds) != wantRounds {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(plan.Rounds), wantRounds)
		}
		checkRounds(t, m, plan.Rounds, true)
	}
}

// The stalest pair, and never-measured ones before it, run in round one.
func TestPlanCycle_StalestRoundFirst(t *testing.T) {
	t.Parallel()
	m := nodeNames(6)
	last := map[Pair]time.Time{}
	for i, p := range slices.Concat(Rounds(m)...) {
		last[p] = t0.Add(time.Duration(i+100) * time.Minute)
	}
	stale := NewPair("n02", "n05")
	last[stale] = t0
	plan := PlanCycle(m, last, unlimited, t0.Add(24*time.Hour))
	if !slices.Contains(plan.Rounds[0], stale) {
		t.Errorf("first round %v lacks the stalest pair %v", plan.Rounds[0], stale)
	}
	never := NewPair("n01", "n03")
	delete(last, never)
	plan = PlanCycle(m, last, unlimited, t0.Add(24*time.Hour))
	if !slices.Contains(plan.Rounds[0], never) {
		t.Errorf("first round %v lacks the never-measured pair %v", plan.Rounds[0], never)
	}
}

func TestPlanCycle_BudgetHonoured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, perCycle int
	}{
		{n: 8, perCycle: 3}, {n: 9, perCycle: 1}, {n: 32, perCycle: 5}, {n: 33, perCycle: 16},
		{n: 64, perCycle: 21}, {n: 64, perCycle: 40}, {n: 128, perCycle: 21},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,cap=%d", tt.n, tt.perCycle), func(t *testing.T) {
			t.Parallel()
			cfg := BudgetConfig{TestBytes: 1 << 20, CycleInterval: 5 * time.Minute}
			cfg.BytesPerHour = uint64(tt.perCycle) * cfg.TestBytes * 12
			m := nodeNames(tt.n)
			last := map[Pair]time.Time{}
			total := tt.n * (tt.n - 1) / 2
			for c := 0; len(last) < total; c++ {
				// The stalest pair always fits, so every cycle measures at
				// least it and none starves; greedy packing is not perfect,
				// so allow twice the ideal number of cycles.
				ideal := (total + tt.n/2*tt.perCycle - 1) / (tt.n / 2 * tt.perCycle)
				if c > 2*ideal+1 {
					t.Fatalf("not every pair measured after %d cycles (ideal %d)", c, ideal)
				}
				now := t0.Add(time.Duration(c) * cfg.CycleInterval)
				plan := PlanCycle(m, last, cfg, now)
				if !plan.Budgeted || plan.TestsPerNode != tt.perCycle {
					t.Fatalf("cycle %d: budgeted %v, cap %d; want cap %d", c, plan.Budgeted, plan.TestsPerNode, tt.perCycle)
				}
				seen := checkRounds(t, m, plan.Rounds, false)
				if len(plan.Rounds) > tt.n-1 {
					t.Errorf("cycle %d: %d rounds, more than a tournament's %d", c, len(plan.Rounds), tt.n-1)
				}
				tests := map[string]int{}
				for p := range seen {
					tests[p.A]++
					tests[p.B]++
				}
				for node, k := range tests {
					if k > tt.perCycle {
						t.Fatalf("cycle %d: %s in %d tests, cap %d", c, node, k, tt.perCycle)
					}
				}
				if len(seen)+len(plan.Deferred) != total {
					t.Fatalf("cycle %d: %d planned + %d deferred != %d pairs", c, len(seen), len(plan.Deferred), total)
				}
				// Stalest first: nothing deferred is staler than anything planned.
				var newestPlanned time.Time
				for p := range seen {
					if last[p].After(newestPlanned) {
						newestPlanned = last[p]
					}
				}
				for _, p := range plan.Deferred {
					if last[p].Before(newestPlanned) && hasRoom(tests, p, tt.perCycle) {
						t.Fatalf("cycle %d: deferred %v (last %v) is staler than a planned pair and had room", c, p, last[p])
					}
				}
				for r, round := range plan.Rounds {
					for _, p := range round {
						last[p] = now.Add(time.Duration(r+1) * time.Second)
					}
				}
			}
		})
	}
}

func hasRoom(tests map[string]int, p Pair, limit int) bool {
	return tests[p.A] < limit && tests[p.B] < limit
}

func TestPlanCycle_MembershipChange(t *testing.T) {
	t.Parallel()
	last := map[Pair]time.Time{NewPair("a", "b"): t0, NewPair("a", "gone"): t0}
	plan := PlanCycle([]string{"a", "b", "c"}, last, unlimited, t0)
	for _, p := range plan.Pairs() {
		if p.A == "gone" || p.B == "gone" {
			t.Fatalf("plan includes a departed node: %v", p)
		}
	}
	if got := len(plan.Pairs()); got != 3 {
		t.Errorf("%d pairs, want 3", got)
	}
}

func TestUnmeasured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		members []string
		last    map[Pair]time.Time
		want    []Pair
	}{
		{name: "nothing measured", members: []string{"c", "a", "b"}, want: []Pair{{"a", "b"}, {"a", "c"}, {"b", "c"}}},
		{name: "some measured", members: []string{"a", "b", "c"},
			last: map[Pair]time.Time{{"a", "b"}: t0, {"b", "c"}: {}}, want: []Pair{{"a", "c"}, {"b", "c"}}},
		{name: "all measured", members: []string{"a", "b"}, last: map[Pair]time.Time{{"a", "b"}: t0}, want: nil},
		{name: "single node", members: []string{"a"}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Unmeasured(tt.members, tt.last); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// Nodes that join after a full cycle get their pairs measured at once, in
// as few rounds as the tournament needs, and nothing already tried is
// repeated.
func TestPlanCatchUp_Joiners(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ old, joined int }{{6, 6}, {11, 1}, {2, 7}, {31, 1}, {10, 0}} {
		t.Run(fmt.Sprintf("%d+%d", tc.old, tc.joined), func(t *testing.T) {
			t.Parallel()
			m := nodeNames(tc.old + tc.joined)
			first := PlanCycle(m[:tc.old], nil, unlimited, t0)
			last := map[Pair]time.Time{}
			tries := map[Pair]int{}
			for _, p := range first.Pairs() {
				last[p], tries[p] = t0, 1
			}
			plan := PlanCatchUp(m, last, tries, nil, unlimited, t0)
			want := len(m)*(len(m)-1)/2 - len(first.Pairs())
			seen := checkRounds(t, m, plan.Rounds, false)
			if len(seen) != want {
				t.Fatalf("%d pairs caught up, want %d", len(seen), want)
			}
			for p := range seen {
				if tries[p] > 0 {
					t.Fatalf("pair %v repeated", p)
				}
			}
			if tc.joined > 0 && len(plan.Rounds) > len(m) {
				t.Errorf("%d rounds for %d nodes", len(plan.Rounds), len(m))
			}
		})
	}
}

// A test that failed is retried once in a catch-up cycle; a pair that
// keeps failing (a broken link) is left to the next full cycle instead of
// being retested every round.
func TestPlanCatchUp_FailedPairRetriedOnce(t *testing.T) {
	t.Parallel()
	m := []string{"a", "b", "c"}
	last := map[Pair]time.Time{{"a", "b"}: t0, {"b", "c"}: t0}
	tries := map[Pair]int{{"a", "b"}: 1, {"b", "c"}: 1, {"a", "c"}: 1}
	plan := PlanCatchUp(m, last, tries, nil, unlimited, t0)
	if got := plan.Pairs(); !reflect.DeepEqual(got, []Pair{{"a", "c"}}) {
		t.Fatalf("first catch-up: got %v, want a retry of [{a c}]", got)
	}
	tries[Pair{"a", "c"}] = CatchUpTries
	if plan := PlanCatchUp(m, last, tries, nil, unlimited, t0); len(plan.Rounds) != 0 {
		t.Fatalf("retests a pair that failed %d times: %v", CatchUpTries, plan.Rounds)
	}
}

// The per-node cap of the budget holds for catch-up cycles too.
func TestPlanCatchUp_Budget(t *testing.T) {
	t.Parallel()
	m := nodeNames(20)
	b := BudgetConfig{BytesPerHour: 12 * 4 << 20, TestBytes: 4 << 20, CycleInterval: 30 * time.Minute} // 6 tests a cycle
	plan := PlanCatchUp(m, nil, nil, nil, b, t0)
	per := map[string]int{}
	for _, p := range plan.Pairs() {
		per[p.A]++
		per[p.B]++
	}
	for n, c := range per {
		if c > 6 {
			t.Fatalf("%s takes %d tests, cap 6", n, c)
		}
	}
	if !plan.Budgeted || len(plan.Pairs()) == 0 {
		t.Fatalf("plan %+v", plan)
	}
}

// A pair whose test ran beside other traffic is tested again in a
// catch-up, up to RetestTries tests between full cycles; a pair with a
// dead end, or not asked for, is not.
func TestPlanCatchUp_Retest(t *testing.T) {
	t.Parallel()
	m := []string{"a", "b", "c", "d"}
	last := map[Pair]time.Time{}
	tries := map[Pair]int{}
	for _, p := range PlanCycle(m, nil, unlimited, t0).Pairs() {
		last[p], tries[p] = t0, 1
	}
	retest := []Pair{{"b", "a"}, {"c", "d"}, {"a", "zz"}}
	plan := PlanCatchUp(m, last, tries, retest, unlimited, t0)
	checkRounds(t, m, plan.Rounds, false)
	if got := plan.Pairs(); !reflect.DeepEqual(got, []Pair{{"a", "b"}, {"c", "d"}}) {
		t.Fatalf("retest: got %v, want [{a b} {c d}] (zz is not a member)", got)
	}
	tries[Pair{"a", "b"}] = RetestTries
	if got := PlanCatchUp(m, last, tries, retest, unlimited, t0).Pairs(); !reflect.DeepEqual(got, []Pair{{"c", "d"}}) {
		t.Fatalf("a and b tested %d times: got %v, want only [{c d}]", RetestTries, got)
	}
}

// A pair through a changed link (TopoInput.Linked) is tested again in a
// catch-up however often it was tested since the full cycle (the leader
// counts its tries per change), ahead of the re-tests of readings beside
// traffic, and still within the budget.
func TestPlanTopoCatchUp_LinkedPastRetestTries(t *testing.T) {
	t.Parallel()
	m := nodeNames(4)
	b := BudgetConfig{BytesPerHour: 12 * 4 * (4 << 20), TestBytes: 4 << 20, CycleInterval: 5 * time.Minute} // 4 tests a cycle
	last := map[Pair]time.Time{}
	tries := map[Pair]int{}
	for _, p := range PlanCycle(m, nil, b, t0).Pairs() {
		last[p], tries[p] = t0, 1 // 3 tests each
	}
	linked := NewPair(m[0], m[1])
	in := TopoInput{Members: m, Last: last, Budget: b, Now: t0, Cycle: 2, Config: DefaultTopoConfig(),
		Linked: []Pair{linked}, Retest: []Pair{linked, NewPair(m[2], m[3])}}
	if got := PlanTopoCatchUp(in, tries).Pairs(); !slices.Equal(got, []Pair{linked, NewPair(m[2], m[3])}) {
		t.Fatalf("one test left each: got %v, want %v and the re-test", got, linked)
	}
	tries[NewPair(m[0], m[2])]++ // m[0] has spent its fourth test
	if got := PlanTopoCatchUp(in, tries).Pairs(); slices.Contains(got, linked) {
		t.Fatalf("%s's budget spent: got %v, want %v left", m[0], got, linked)
	}
	in.Budget = unlimited
	tries[linked] = RetestTries
	if got := PlanTopoCatchUp(in, tries).Pairs(); !slices.Contains(got, linked) {
		t.Fatalf("tried %d times since the full cycle: got %v, want %v tested again for its link", RetestTries, got, linked)
	}
	in.Linked = nil
	if got := PlanTopoCatchUp(in, tries).Pairs(); slices.Contains(got, linked) {
		t.Fatalf("as a re-test beside traffic only: got %v, want %v left after %d tries", got, linked, RetestTries)
	}
}

// Retests spend only what the budget leaves of the cycle: a node whose
// tests since the full cycle began reach the cap gets none.
func TestPlanCatchUp_RetestWithinBudget(t *testing.T) {
	t.Parallel()
	m := nodeNames(4)
	b := BudgetConfig{BytesPerHour: 12 * 4 * (4 << 20), TestBytes: 4 << 20, CycleInterval: 5 * time.Minute} // 4 tests a cycle
	if b.TestsPerCycle() != 4 {
		t.Fatalf("budget gives %d tests a cycle, the test wants 4", b.TestsPerCycle())
	}
	last := map[Pair]time.Time{}
	tries := map[Pair]int{}
	for _, p := range PlanCycle(m, nil, b, t0).Pairs() {
		last[p], tries[p] = t0, 1 // 3 tests each
	}
	retest := []Pair{NewPair(m[0], m[1]), NewPair(m[2], m[3])}
	if got := PlanCatchUp(m, last, tries, retest, b, t0).Pairs(); len(got) != 2 {
		t.Fatalf("one test left each: got %v, want both retests", got)
	}
	tries[NewPair(m[0], m[2])]++ // m[0] and m[2] have spent their fourth
	if got := PlanCatchUp(m, last, tries, retest, b, t0).Pairs(); len(got) != 0 {
		t.Fatalf("budget spent: got %v, want no retest", got)
	}
}
