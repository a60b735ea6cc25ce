package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// The experiment can only tell policies apart if they choose differently
// on lab12: the load-only baseline must not stumble on the oracle's group
// (on lab12 names follow the switches, so a load-only policy breaking
// ties by name would be topology-aware by accident; the nodes' small
// background loads prevent that), and netload, given a perfect snapshot,
// must find the least-T group the t-oracle finds by brute force.
func TestLab12Model(t *testing.T) {
	t.Parallel()
	topo, err := netns.LoadTopology("../../testbed/lab12.json")
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(topo)
	oracle, err := m.oracle(4)
	if err != nil {
		t.Fatal(err)
	}
	tOracle, td, err := m.tOracle(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(policy string, alpha float64, weights ...string) []string {
		r := placement.Request{N: 4, Oversubscribe: true, Force: true, Policy: policy, Alpha: alpha}
		if len(weights) > 0 {
			w := placement.DefaultAttrWeights()
			for _, s := range weights {
				if err := w.SetWeight(s); err != nil {
					t.Fatal(err)
				}
			}
			r.Attr = &w
		}
		d, err := placement.Place(m.snapshot(), r)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		hosts := ranksOf(d)
		slices.Sort(hosts)
		return hosts
	}
	slices.Sort(oracle)
	slices.Sort(tOracle)
	if got := pick(placement.PolicyNetload, 0); !slices.Equal(got, tOracle) {
		t.Errorf("netload with a perfect snapshot chose %v, the t-oracle %v (T %.4f)", got, tOracle, td.Score.T)
	}
	load := pick(placement.PolicyLoad, 0)
	if slices.Equal(load, oracle) {
		t.Errorf("load-only chose the oracle's group %v: lab12 cannot tell network-aware placement from it", load)
	}
	minAvail, switches, hogs := m.groupStats(oracle)
	if hogs != 0 || switches != 2 || minAvail != 30 {
		t.Errorf("oracle group %v: min %.0f Mbit/s, %d switches, %d hog nodes", oracle, minAvail, switches, hogs)
	}
	// With node flow counted as a share of each node's link, T's optimum
	// on a perfect snapshot is as good as the oracle's group; with Eq. 1's
	// sum normalisation the background flows steered it to the four 20-50
	// Mbit/s nodes of sw3 (docs/design/experiment.md, first runs).
	if mn, sw, hg := m.groupStats(tOracle); mn != minAvail || sw != switches || hg != 0 {
		t.Errorf("t-oracle %v: min %.0f Mbit/s, %d switches, %d hogs: not as good as the oracle's", tOracle, mn, sw, hg)
	}
	// Dropping node flow or a low alpha keeps it there.
	for _, v := range []struct {
		alpha   float64
		weights []string
	}{{0.3, []string{"flow=0"}}, {0.05, nil}} {
		g := pick(placement.PolicyNetload, v.alpha, v.weights...)
		if mn, sw, hg := m.groupStats(g); mn != minAvail || sw != switches || hg != 0 {
			t.Errorf("netload alpha %.2f %v: chose %v (min %.0f Mbit/s, %d switches, %d hogs), not as good as the oracle's", v.alpha, v.weights, g, mn, sw, hg)
		}
	}
	t.Logf("oracle %v, t-oracle %v, load %v", oracle, tOracle, load)
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string][3]string{
		"netload":                 {"netload", "", ""},
		"netload@0.1":             {"netload", "0.1", ""},
		"netload/flow=0":          {"netload", "", "flow=0"},
		"paper@0.2/flow=0/load=1": {"paper", "0.2", "flow=0,load=1"},
	} {
		name, alpha, w := parsePolicy(spec)
		if got := [3]string{name, alpha, strings.Join(w, ",")}; got != want {
			t.Errorf("%q: got %q, want %q", spec, got, want)
		}
	}
}
