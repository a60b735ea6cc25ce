package main

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// groupsOf lists every group of k of the names (in order).
func groupsOf(names []string, k int) [][]string {
	var out [][]string
	var walk func(from int, g []string)
	walk = func(from int, g []string) {
		if len(g) == k {
			out = append(out, append([]string(nil), g...))
			return
		}
		for i := from; i < len(names); i++ {
			walk(i+1, append(g, names[i]))
		}
	}
	walk(0, nil)
	return out
}

func loadCase(t *testing.T, name string) netns.Topology {
	t.Helper()
	topo, err := netns.LoadTopology("../../testbed/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func nodeNames(topo netns.Topology) []string {
	var out []string
	for _, n := range topo.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// spread checks what every case must offer for the experiment to tell
// policies apart: the oracle's group at least twice as fast (slowest
// pair) as the median 4-node group, and the load-only baseline not on
// the oracle's group by accident. It returns the oracle's slowest pair.
func spread(t *testing.T, m *model, np int) (oracle []string, best float64) {
	t.Helper()
	oracle, err := m.oracle(np)
	if err != nil {
		t.Fatal(err)
	}
	best, _, _ = m.groupStats(oracle)
	var all []float64
	for _, g := range groupsOf(nodeNames(m.topo), np) {
		v, _, _ := m.groupStats(g)
		all = append(all, v)
	}
	if med := median(all); best < 2*med {
		t.Errorf("%s: oracle %v's slowest pair %.0f Mbit/s, median group %.0f: random is not far enough from the best", m.topo.Name, oracle, best, med)
	}
	load := pickOn(t, m.snapshot(), placement.PolicyLoad, np)
	if v, _, _ := m.groupStats(load); v >= best {
		t.Errorf("%s: load-only chose %v (%.0f Mbit/s), as good as the oracle's: it cannot be told from network-aware placement", m.topo.Name, load, v)
	}
	return oracle, best
}

func pickOn(t *testing.T, s placement.Snapshot, policy string, np int) []string {
	t.Helper()
	d, err := placement.Place(s, placement.Request{N: np, Oversubscribe: true, Force: true, Policy: policy})
	if err != nil {
		t.Fatalf("%s: %v", policy, err)
	}
	g := ranksOf(d)
	slices.Sort(g)
	return g
}

// bulk10: a saturating flow n01 -> n02 inside sw1, the switch with the
// fastest links. Every 4-node group on sw1 holds both ends of the flow
// and is far slower than the quiet sw2; pairs of sw1 that the flow does
// not cross (and the flow's free direction) measure 200 Mbit/s, more
// than anything on sw2: what a pairwise bandwidth test sees is the trap.
func TestCaseBulk10(t *testing.T) {
	t.Parallel()
	topo := loadCase(t, "bulk10")
	m := newModel(topo)
	oracle, best := spread(t, m, 4)
	if want := []string{"n05", "n06", "n07", "n08"}; !slices.Equal(oracle, want) {
		t.Errorf("oracle %v, want the quiet sw2 %v", oracle, want)
	}
	busy := []string{"n01", "n02", "n03", "n04"}
	if v, _, _ := m.groupStats(busy); v > best/2 {
		t.Errorf("busy switch %v: slowest pair %.0f Mbit/s, not below half the oracle's %.0f: the flow does not saturate it", busy, v, best)
	}
	if _, fast, _ := m.pair("n02", "n01"); fast <= best {
		t.Errorf("the flow's free direction n02->n01 leaves %.0f Mbit/s, want more than the oracle's %.0f (the trap)", fast, best)
	}
	if _, fast, _ := m.pair("n03", "n04"); fast <= best {
		t.Errorf("quiet pair n03->n04 on the busy switch: %.0f Mbit/s, want more than the oracle's %.0f", fast, best)
	}
}

// asym10: n02 sends at 200 and receives at 15, n04 the reverse, and the
// uplink is 80 one way and 30 the other. A pair measured in one direction
// only can look faster than the oracle's group while its other direction
// is far slower.
func TestCaseAsym10(t *testing.T) {
	t.Parallel()
	topo := loadCase(t, "asym10")
	m := newModel(topo)
	oracle, best := spread(t, m, 4)
	for _, x := range []string{"n02", "n04"} {
		if slices.Contains(oracle, x) {
			t.Errorf("oracle %v holds the asymmetric node %s", oracle, x)
		}
		fast, slow := 0.0, math.Inf(1)
		for _, y := range nodeNames(topo) {
			if y == x {
				continue
			}
			_, ab, _ := m.pair(x, y)
			_, ba, _ := m.pair(y, x)
			fast, slow = max(fast, ab, ba), min(slow, ab, ba)
		}
		if fast <= best || slow >= best/2 {
			t.Errorf("%s: fastest direction %.0f Mbit/s, slowest %.0f; want the fast one above the oracle's %.0f and the slow one below half of it", x, fast, slow, best)
		}
	}
	// The uplink's two directions differ: a cross-switch pair's slower
	// direction is the B-to-A one.
	_, ab, _ := m.pair("n01", "n06")
	_, ba, _ := m.pair("n06", "n01")
	if ab <= ba {
		t.Errorf("uplink: n01->n06 %.0f Mbit/s, n06->n01 %.0f: not asymmetric", ab, ba)
	}
}

// degrade10: n02's link drops from 100 to 10 Mbit/s mid-run. The
// oracle's group holds n02 before the change and not after it, and the
// old group is then far slower than the new one.
func TestCaseDegrade10(t *testing.T) {
	t.Parallel()
	topo := loadCase(t, "degrade10")
	if len(topo.Changes) != 1 {
		t.Fatalf("%d scheduled changes, want 1", len(topo.Changes))
	}
	before, after := newModelAt(topo, 0), newModelAt(topo, 1)
	ob, bestB := spread(t, before, 4)
	oa, bestA := spread(t, after, 4)
	ch := topo.Changes[0].Node
	if !slices.Contains(ob, ch) || slices.Contains(oa, ch) {
		t.Errorf("oracle before %v, after %v: want %s in the first and not in the second", ob, oa, ch)
	}
	if v, _, _ := after.groupStats(ob); v > bestA/2 {
		t.Errorf("the old oracle %v after the change: %.0f Mbit/s, not below half the new oracle's %.0f", ob, v, bestA)
	}
	if bestB < bestA {
		t.Errorf("oracle before %.0f Mbit/s, after %.0f: a degraded link made the best group faster", bestB, bestA)
	}
}

// pendingDirectional are the cases where netload, on a perfect snapshot,
// is known to choose worse than the oracle because placement averages a
// pair's two directions (a saturated or slow direction hides behind the
// fast one). Strict: a case listed here that passes
// fails the test, so the list shrinks when placement learns directions.
var pendingDirectional = map[string]string{}

// casePhases are every case and phase (degrade10 before and after its
// scheduled change) the perfect-snapshot tests cover.
var casePhases = []struct {
	name  string
	phase int
}{{"lab12", 0}, {"bulk10", 0}, {"asym10", 0}, {"degrade10", 0}, {"degrade10", 1}}

// caseOracle is a case's configured model in a phase, the oracle's
// 4-node group and its slowest pair (Mbit/s).
func caseOracle(t *testing.T, name string, phase int) (*model, []string, float64) {
	t.Helper()
	m := newModelAt(loadCase(t, name), phase)
	oracle, err := m.oracle(4)
	if err != nil {
		t.Fatal(err)
	}
	best, _, _ := m.groupStats(oracle)
	return m, oracle, best
}

// On every case, netload given a perfect snapshot (every ordered pair's
// configured rates) finds a group as good as the oracle's: what it would
// do if its measurements were exact. A case where even a perfect
// snapshot misleads netload measures the model, not the probes; this
// says so by name.
func TestCasesNetloadOnPerfectSnapshot(t *testing.T) {
	t.Parallel()
	for _, c := range casePhases {
		t.Run(fmt.Sprintf("%s/%d", c.name, c.phase), func(t *testing.T) {
			t.Parallel()
			m, oracle, best := caseOracle(t, c.name, c.phase)
			got := pickOn(t, m.snapshot(), placement.PolicyNetload, 4)
			v, _, hogs := m.groupStats(got)
			t.Logf("netload %v (%.0f Mbit/s), oracle %v (%.0f)", got, v, oracle, best)
			bad := hogs > 0 || v < best
			why, pending := pendingDirectional[fmt.Sprintf("%s/%d", c.name, c.phase)]
			switch {
			case bad && pending:
				t.Skipf("known (placement averages a pair's directions): %s; netload chose %v (%.0f Mbit/s)", why, got, v)
			case bad:
				t.Errorf("netload on a perfect snapshot chose %v: slowest pair %.0f Mbit/s, %d hog nodes; oracle %v %.0f", got, v, hogs, oracle, best)
			case pending:
				t.Errorf("netload now finds an oracle-class group (%v): remove %s/%d from pendingDirectional", got, c.name, c.phase)
			}
		})
	}
}

// peers9, the case of the comparison with Slurm: n02 behind a slow cable
// on sw1, whose nodes come first in Slurm's node order and in the
// cabling's topology.conf; a saturating flow inside sw2; the quiet sw3 is
// the best group. A placement by node order or by switch alone takes sw1.
func TestCasePeers9(t *testing.T) {
	t.Parallel()
	topo := loadCase(t, "peers9")
	m := newModel(topo)
	oracle, best := spread(t, m, 3)
	if want := []string{"n07", "n08", "n09"}; !slices.Equal(oracle, want) {
		t.Errorf("oracle %v, want the quiet sw3 %v", oracle, want)
	}
	for _, g := range [][]string{{"n01", "n02", "n03"}, {"n04", "n05", "n06"}} {
		if v, _, _ := m.groupStats(g); v > best/2 {
			t.Errorf("%v: slowest pair %.0f Mbit/s, not below half the oracle's %.0f", g, v, best)
		}
	}
}

// queue12: a queue of jobs of 2, 4 and 6 ranks back to back on 12 nodes.
// A saturating flow inside sw1, n11 behind a 20 Mbit/s cable on the
// otherwise fast sw3: each size has its own best group, and none of them
// holds the flow's ends or n11.
func TestCaseQueue12(t *testing.T) {
	t.Parallel()
	topo := loadCase(t, "queue12")
	if want := []int{2, 4, 6}; !slices.Equal(topo.JobSizes, want) {
		t.Fatalf("job sizes %v, want %v", topo.JobSizes, want)
	}
	m := newModel(topo)
	for _, np := range topo.JobSizes {
		oracle, _ := spread(t, m, np)
		for _, x := range []string{"n01", "n02", "n11"} {
			if slices.Contains(oracle, x) {
				t.Errorf("%d ranks: oracle %v holds %s", np, oracle, x)
			}
		}
		t.Logf("%d ranks: oracle %v", np, oracle)
	}
}
