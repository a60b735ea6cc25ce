package placement

import (
	"math"
	"testing"
)

// Node flow for T counts by the share of a node's link it uses: on nearly
// idle links a little traffic weighs little, on full links as much as Eq. 1
// gives. Eq. 1 (no link rates) is unchanged.
func TestComputeLoads_FlowShare(t *testing.T) {
	t.Parallel()
	w := AttrWeights{NetFlow: 1, M1: 1}
	mbps := func(m float64) Means { b := m * 1e6 / 8; return Means{M1: b} }
	nodes := func(flows ...float64) []*Node {
		var out []*Node
		for _, f := range flows {
			out = append(out, &Node{Cores: 2, NetFlow: mbps(f)})
		}
		return out
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

	light := nodes(30, 0, 0, 0)
	if cl := computeLoads(light, &w, nil); !near(cl[0], 1) || !near(cl[1], 0) {
		t.Fatalf("Eq. 1: 30 Mbit/s on one node of four takes the whole weight: %v", cl)
	}
	cl := computeLoads(light, &w, []float64{200, 200, 200, 200})
	if want := 0.15 / 4; !near(cl[0], want) || !near(cl[1], 0) {
		t.Fatalf("T: 30 Mbit/s on a 200 Mbit/s link of four idle nodes: %v, want [%v 0 0 0]", cl, want)
	}
	// Full links: each a 1/V share, as Eq. 1 gives equal flows; a share is
	// capped at 1.
	cl = computeLoads(nodes(200, 400, 50), &w, []float64{200, 200, 100})
	if !near(cl[0], 1.0/3) || !near(cl[1], 1.0/3) || !near(cl[2], 0.5/3) {
		t.Fatalf("full links: %v, want [1/3 1/3 1/6]", cl)
	}
	if cl := computeLoads(light, &w, []float64{200, 0, 200, 200}); !near(cl[0], 1) {
		t.Fatalf("a node without a measured link: %v, want Eq. 1 for all", cl)
	}
}
