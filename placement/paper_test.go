package placement_test

import (
	"math"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// TestPaper_HandComputedExample checks the paper policy against Eq. 1-4 worked
// by hand on three nodes.
//
// Nodes A, B, C: 4 logical cores each, equal clock, memory and available
// memory; CPU utilisation and node flow are 0 everywhere; the load average
// (every horizon) is A 1, B 2, C 3.
//
// Eq. 1 with the default weights: only load ranks the nodes. Load normalised by
// its sum 6 is 1/6, 2/6, 3/6; times 0.3 gives CL_A = 0.05, CL_B = 0.10,
// CL_C = 0.15. Equal maximisation attributes complement to 0, all-zero
// attributes have no sum and add nothing.
//
// Eq. 3: pc_A = 4 - 1%4 = 3, pc_B = 4 - 2%4 = 2, pc_C = 4 - 3%4 = 1.
//
// Eq. 2 (w_lt 0.25, w_bw 0.75; peaks 1000 Mbit/s):
//
//	pair  RTT  avail  complement
//	A-B   1    900    100
//	A-C   1    600    400
//	B-C   2    500    500        sums: RTT 4, complement 1000
//
//	NL_AB = 0.25*1/4 + 0.75*100/1000 = 0.1375
//	NL_AC = 0.25*1/4 + 0.75*400/1000 = 0.3625
//	NL_BC = 0.25*2/4 + 0.75*500/1000 = 0.5
//
// Alg. 1 for n = 4, alpha 0.3, beta 0.7, A_v(u) = 0.3*CL_u + 0.7*NL_vu:
//
//	start A: A_A(B) = 0.03 + 0.09625 = 0.12625, A_A(C) = 0.045 + 0.25375 = 0.29875
//	         A (3) + B (2) >= 4           -> G_A = {A, B}, C = 0.15, N = 0.1375
//	start B: A_B(A) = 0.015 + 0.09625 = 0.11125, A_B(C) = 0.045 + 0.35 = 0.395
//	         B (2) + A (3) >= 4           -> G_B = {B, A}, C = 0.15, N = 0.1375
//	start C: A_C(A) = 0.015 + 0.25375 = 0.26875, A_C(B) = 0.03 + 0.35 = 0.38
//	         C (1) + A (3) >= 4           -> G_C = {C, A}, C = 0.20, N = 0.3625
//
// Alg. 2 / Eq. 4: sum C = 0.5, sum N = 0.6375;
//
//	T_A = T_B = 0.3*0.15/0.5 + 0.7*0.1375/0.6375 = 0.09 + 0.150980 = 0.240980
//	T_C       = 0.3*0.20/0.5 + 0.7*0.3625/0.6375 = 0.12 + 0.398039 = 0.518039
//
// G_A wins (first of the tie, starts in name order): A gets pc_A = 3, B the last 1.
//
// The breakdown's CL and N are T's, not Eq. 1's and 2's. CL: load as the
// share of the node's cores and used memory (8 of 16 GiB) as the share of
// its memory, each over the node count: CL_A = (0.3*1/4 + 0.1*1/2)/3 =
// 0.125/3, CL_B = (0.3*2/4 + 0.1*1/2)/3 = 0.2/3. N: the RTT over the median
// RTT (1) and the transfer cost against the fastest peak (1000/900 - 1),
// neither divided by a sum: NL_AB = 0.25*1/1 + 0.75*(1/9) = 0.25 + 0.083333333.
// With n = 7 > 6 slots, Alg. 1 wraps to the start: A 3+1, B 2, C 1, degraded.
func TestPaper_HandComputedExample(t *testing.T) {
	t.Parallel()
	nodes := []placement.Node{node("A", 4, 1), node("B", 4, 2), node("C", 4, 3)}
	snap := placement.Snapshot{Nodes: nodes, Links: []placement.Link{
		link("A", "B", 1, 900, 1000), link("A", "C", 1, 600, 1000), link("B", "C", 2, 500, 1000),
	}}
	d, err := placement.Place(snap, placement.Request{N: 4, Policy: "paper", Oversubscribe: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []placement.Host{{Node: "A", NP: 3}, {Node: "B", NP: 1}}
	if len(d.Hosts) != 2 || d.Hosts[0] != want[0] || d.Hosts[1] != want[1] || d.Degraded {
		t.Fatalf("hosts = %v (degraded %v), want %v", d.Hosts, d.Degraded, want)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.9f, want %.9f", name, got, want)
		}
	}
	near("CL_A", d.Score.Nodes[0].CL, 0.125/3)
	near("CL_B", d.Score.Nodes[1].CL, 0.2/3)
	near("C", d.Score.C, 0.325/3)
	near("N", d.Score.N, 0.25+0.75/9)
	near("T (Eq. 4)", d.Score.PaperT, 0.09+0.7*0.1375/0.6375)
	if d.Score.Candidates != 3 {
		t.Errorf("candidates = %d, want 3", d.Score.Candidates)
	}

	d, err = placement.Place(snap, placement.Request{N: 7, Policy: "paper", Oversubscribe: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hostsString(d); got != "A:4 B:2 C:1 " || !d.Degraded {
		t.Fatalf("n=7: hosts %q degraded %v, want A:4 B:2 C:1 degraded", got, d.Degraded)
	}
}

// Eq. 3 wraps around: a node whose load equals its core count looks idle to the
// paper; netload counts it full.
func TestCapacity_PaperWrapsNetloadDoesNot(t *testing.T) {
	t.Parallel()
	snap := placement.Snapshot{Nodes: []placement.Node{node("busy", 4, 4), node("idle", 4, 0)}}
	for _, tc := range []struct {
		policy string
		slots  int
	}{{"paper", 4}, {"netload", 0}} {
		d, err := placement.Place(snap, placement.Request{N: 8, Policy: tc.policy, Oversubscribe: true, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range d.Score.Nodes {
			if ns.Node == "busy" && ns.Slots != tc.slots {
				t.Errorf("%s: busy node has %d slots, want %d", tc.policy, ns.Slots, tc.slots)
			}
		}
	}
}
