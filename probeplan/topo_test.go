package probeplan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// topoCluster names nodes "s<k>n<i>" on switches "s<k>" of the given sizes;
// a size of -m adds m nodes of unknown switch "u<i>".
func topoCluster(sizes ...int) ([]string, map[string]string) {
	var members []string
	sw := map[string]string{}
	for k, size := range sizes {
		if size < 0 {
			for i := range -size {
				members = append(members, fmt.Sprintf("u%02d", i))
			}
			continue
		}
		for i := range size {
			n := fmt.Sprintf("s%02dn%03d", k, i)
			members = append(members, n)
			sw[n] = fmt.Sprintf("s%02d", k)
		}
	}
	return members, sw
}

// checkTopo asserts the planner's invariants on one plan and returns the
// tests of each node.
func checkTopo(t *testing.T, in TopoInput, plan TopoPlan, full bool) map[string]int {
	t.Helper()
	cfg := in.Config.orDefault()
	cap := min(in.Budget.TestsPerCycle(), cfg.PerNode())
	load := map[string]int{}
	own := map[string]int{}
	swPair := map[Pair]int{}
	upl := map[string]int{}
	seen := map[Pair]bool{}
	for r, round := range plan.Rounds {
		busy := map[string]bool{}
		up := map[string]bool{}
		for _, p := range round {
			if seen[p] {
				t.Fatalf("pair %v scheduled twice", p)
			}
			seen[p] = true
			if busy[p.A] || busy[p.B] {
				t.Fatalf("round %d: a node of %v is in two tests", r, p)
			}
			busy[p.A], busy[p.B] = true, true
			load[p.A]++
			load[p.B]++
			sa, sb := in.Switch[p.A], in.Switch[p.B]
			if sa != "" && sa == sb {
				own[p.A]++
				own[p.B]++
				continue
			}
			for _, s := range []string{sa, sb} {
				if s == "" {
					continue
				}
				if up[s] {
					t.Fatalf("round %d: switch %s's uplink carries two cross-switch tests (%v)", r, s, p)
				}
				up[s] = true
				upl[s]++
			}
			if sa != "" && sb != "" {
				swPair[NewPair(sa, sb)]++
			}
		}
	}
	for n, c := range load {
		if c > cap {
			t.Fatalf("%s in %d tests, cap %d", n, c, cap)
		}
	}
	for s, c := range upl {
		if c > cfg.CrossPerSwitch+cfg.ExplorePerNode*len(in.Members) {
			t.Fatalf("switch %s: %d cross tests", s, c)
		}
	}
	for k, c := range swPair {
		if c > cfg.PairTests+cfg.UncertainPerNode*len(in.Members)+cfg.ExplorePerNode*len(in.Members) {
			t.Fatalf("switch pair %v: %d tests", k, c)
		}
	}
	if full && cap >= 2 {
		groups := map[string]int{}
		for _, n := range in.Members {
			if s := in.Switch[n]; s != "" {
				groups[s]++
			}
		}
		for _, n := range in.Members {
			if s := in.Switch[n]; s != "" && groups[s] >= 2 && own[n] == 0 {
				t.Fatalf("%s (switch %s, %d nodes) has no own-switch test: its link is not measured this cycle", n, s, groups[s])
			}
		}
	}
	return load
}

func TestPlanTopoCycle_Table(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	budget := DefaultBudgetConfig()
	cases := []struct {
		name      string
		sizes     []int
		wantKinds map[string]int
	}{
		{"one switch of 4: a ring", []int{4}, map[string]int{"own": 4}},
		{"one switch of 5", []int{5}, map[string]int{"own": 5}},
		{"two nodes", []int{2}, map[string]int{"own": 1}},
		{"3 switches of 4: ring each, one test per switch pair", []int{4, 4, 4}, map[string]int{"own": 12, "cross": 3}},
		{"single-node switch", []int{4, 1}, map[string]int{"own": 4, "cross": 1}},
		{"unknown nodes explore: 4 each, 2 nodes of s00 and the other unknowns", []int{4, -3}, map[string]int{"own": 4, "explore": 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, sw := topoCluster(c.sizes...)
			in := TopoInput{Members: m, Switch: sw, Budget: budget, Now: t0, Config: topology()} // cycle 0: ring offset 1
			plan := PlanTopoCycle(in)
			checkTopo(t, in, plan, true)
			for k, v := range c.wantKinds {
				if plan.Kind[k] != v {
					t.Fatalf("kind %s: %d tests, want %d (%v)", k, plan.Kind[k], v, plan.Kind)
				}
			}
			if len(plan.Kind) != len(c.wantKinds) {
				t.Fatalf("kinds %v, want %v", plan.Kind, c.wantKinds)
			}
		})
	}
}

// TestPlanTopoCycle_Property checks the invariants on random clusters and
// that, cycle after cycle, every switch pair is tested.
func TestPlanTopoCycle_Property(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for seed := uint64(1); seed <= 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 17))
		var sizes []int
		for range 1 + r.IntN(12) {
			sizes = append(sizes, 1+r.IntN(20))
		}
		if r.IntN(3) == 0 {
			sizes = append(sizes, -(1 + r.IntN(5)))
		}
		m, sw := topoCluster(sizes...)
		budget := DefaultBudgetConfig()
		if r.IntN(3) == 0 {
			budget.BytesPerHour = uint64(1+r.IntN(6)) * budget.TestBytes * 12
		}
		cfg := topology()
		cfg.CrossPerSwitch = 1 + r.IntN(16)
		cfg.PairTests = 1 + r.IntN(2)
		var unc []Pair
		for range r.IntN(10) {
			a, b := m[r.IntN(len(m))], m[r.IntN(len(m))]
			if a != b {
				unc = append(unc, NewPair(a, b))
			}
		}
		last := map[Pair]time.Time{}
		tested := map[Pair]bool{}
		switches := map[string]bool{}
		for _, s := range sw {
			switches[s] = true
		}
		s := len(switches)
		for c := uint64(1); c <= uint64(2*s+2); c++ {
			now := t0.Add(time.Duration(c) * 5 * time.Minute)
			in := TopoInput{Members: m, Switch: sw, Last: last, Uncertain: unc, Cycle: c, Budget: budget, Config: cfg, Now: now}
			plan := PlanTopoCycle(in)
			checkTopo(t, in, plan, true)
			for _, p := range plan.Pairs() {
				last[p] = now
				if sw[p.A] != "" && sw[p.B] != "" && sw[p.A] != sw[p.B] {
					tested[NewPair(sw[p.A], sw[p.B])] = true
				}
			}
		}
		if cap := min(budget.TestsPerCycle(), cfg.PerNode()); cap >= 4 {
			if want := s * (s - 1) / 2; len(tested) != want {
				t.Fatalf("seed %d: %d of %d switch pairs tested after %d cycles (sizes %v)", seed, len(tested), want, 2*s+2, sizes)
			}
		}
	}
}

// topology is the default configuration without the small-cluster
// shortcut, so that small test clusters get the model's tests.
func topology() TopoConfig {
	c := DefaultTopoConfig()
	c.SmallCluster = -1
	return c
}

func TestPlanTopoCycle_SmallClusterAllPairs(t *testing.T) {
	t.Parallel()
	m, sw := topoCluster(4, 3, -2) // 9 nodes: 8 tests each, under the per-node bound of 9
	plan := PlanTopoCycle(TopoInput{Members: m, Switch: sw, Budget: DefaultBudgetConfig()})
	if got := len(plan.Pairs()); got != 36 || plan.Kind["all"] != 36 {
		t.Fatalf("9 nodes: %d tests (%v), want all 36 pairs", got, plan.Kind)
	}
	m, sw = topoCluster(4, 4, 3) // 11 nodes: 10 > 9, the model's tests
	if plan := PlanTopoCycle(TopoInput{Members: m, Switch: sw, Budget: DefaultBudgetConfig()}); plan.Kind["all"] != 0 || plan.Kind["own"] == 0 {
		t.Fatalf("11 nodes: %v, want the model's tests", plan.Kind)
	}
}

func TestPlanTopoCatchUp(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, sw := topoCluster(4, 4)
	last := map[Pair]time.Time{}
	for _, p := range PlanTopoCycle(TopoInput{Members: m, Switch: sw, Budget: DefaultBudgetConfig(), Now: t0, Cycle: 1, Config: topology()}).Pairs() {
		last[p] = t0
	}
	in := TopoInput{Members: m, Switch: sw, Last: last, Budget: DefaultBudgetConfig(), Now: t0, Cycle: 2, Config: topology()}
	if plan := PlanTopoCatchUp(in, nil); len(plan.Rounds) != 0 {
		t.Fatalf("nothing to catch up, got %v", plan.Rounds)
	}
	// A joiner on s00, one alone on a new switch, one of unknown switch.
	in.Members = append(in.Members, "s00n009", "z1", "u1")
	in.Switch = map[string]string{"s00n009": "s00", "z1": "z"}
	for k, v := range sw {
		in.Switch[k] = v
	}
	plan := PlanTopoCatchUp(in, nil)
	checkTopo(t, in, plan, false)
	load := map[string]int{}
	for _, p := range plan.Pairs() {
		load[p.A]++
		load[p.B]++
		if _, ok := last[p]; ok {
			t.Fatalf("catch-up retests the measured pair %v", p)
		}
	}
	for _, n := range []string{"s00n009", "z1", "u1"} {
		if load[n] == 0 {
			t.Fatalf("joiner %s not tested in the catch-up: %v", n, plan.Rounds)
		}
	}
	if plan.Kind["own"] != 2 {
		t.Fatalf("joiner on s00: %d own-switch tests, want 2 (%v)", plan.Kind["own"], plan.Kind)
	}
	// Tried twice: waits for the next full cycle.
	tries := map[Pair]int{}
	for _, p := range plan.Pairs() {
		tries[p] = CatchUpTries
	}
	for _, p := range PlanTopoCatchUp(in, tries).Pairs() {
		if tries[p] > 0 {
			t.Fatalf("pair %v tried %d times retested", p, CatchUpTries)
		}
	}
	// Nothing unmeasured, two pairs whose tests ran beside traffic: both
	// are tested again, as kind retest, until tried RetestTries times.
	in = TopoInput{Members: m, Switch: sw, Last: last, Budget: DefaultBudgetConfig(), Now: t0, Cycle: 2, Config: topology()}
	in.Retest = []Pair{NewPair(m[0], m[1]), NewPair(m[2], m[6])}
	tries = map[Pair]int{in.Retest[0]: 1, in.Retest[1]: RetestTries - 1}
	plan = PlanTopoCatchUp(in, tries)
	checkTopo(t, in, plan, false)
	if got := plan.Pairs(); len(got) != 2 || plan.Kind["retest"] != 2 {
		t.Fatalf("retest: got %v (kinds %v), want %v", got, plan.Kind, in.Retest)
	}
	tries[in.Retest[1]] = RetestTries
	if got := PlanTopoCatchUp(in, tries).Pairs(); !slices.Equal(got, in.Retest[:1]) {
		t.Fatalf("after %d tries of %v: got %v, want %v", RetestTries, in.Retest[1], got, in.Retest[:1])
	}
	// Through a changed link the same pair is tested again: its tries
	// count per change, which the leader bounds.
	in.Linked = in.Retest[1:]
	if plan := PlanTopoCatchUp(in, tries); len(plan.Pairs()) != 2 || plan.Kind["linked"] != 1 {
		t.Fatalf("linked %v after %d tries: got %v (kinds %v), want it tested", in.Linked, RetestTries, plan.Pairs(), plan.Kind)
	}
	in.Linked = nil
	// The tests since the full cycle began count against the budget's
	// tests per cycle, not the planner's per-node bound: m[0], past that
	// bound (on a pair that is not re-tested, say its link's re-tests),
	// still has its reading beside traffic tested again; at the budget's
	// count its pair waits.
	tries = map[Pair]int{NewPair(m[0], m[3]): topology().PerNode()}
	for p := range last {
		tries[p]++
	}
	if got := PlanTopoCatchUp(in, tries).Pairs(); len(got) != 2 || !slices.Contains(got, in.Retest[0]) {
		t.Fatalf("%s past the per-node bound %d: got %v, want %v tested again", m[0], topology().PerNode(), got, in.Retest)
	}
	tries[NewPair(m[0], m[3])] = in.Budget.TestsPerCycle()
	if got := PlanTopoCatchUp(in, tries).Pairs(); !slices.Equal(got, in.Retest[1:]) {
		t.Fatalf("%s at the budget's %d tests: got %v, want only %v", m[0], in.Budget.TestsPerCycle(), got, in.Retest[1:])
	}
}

func TestTopoConfigValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultTopoConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := DefaultTopoConfig()
	c.CrossPerNode = 0
	if err := c.Validate(); err == nil || err.Error() != "probe topology: CrossPerNode = 0, want 1..64" {
		t.Fatalf("got %v", err)
	}
}
