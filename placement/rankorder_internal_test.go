package placement

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/internal/natsort"
	"github.com/shoal-hpc/shoal/nodestate"
)

// randCluster is a seeded cluster of n nodes on ns switches (names in
// no switch order), random loads and cores, every pair linked but a
// share unmeasured: faster inside a switch than across, with noise.
func randCluster(r *rand.Rand, n, ns int, unmeasured float64) Snapshot {
	var s Snapshot
	for i := range n {
		l := r.Float64()
		m := nodestate.Means{Now: l, M1: l, M5: l, M15: l}
		s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("node%d", i), Alive: true, Switch: fmt.Sprintf("sw%d", r.IntN(ns)),
			Cores: 1 + r.IntN(4), MHz: 3000, MemTotal: 16 << 30, Load: m,
			MemAvail: nodestate.Means{Now: 8 << 30, M1: 8 << 30, M5: 8 << 30, M15: 8 << 30}})
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if r.Float64() < unmeasured {
				continue
			}
			av := 1000 * (0.5 + 0.5*r.Float64())
			if s.Nodes[i].Switch != s.Nodes[j].Switch {
				av /= 4
			}
			s.Links = append(s.Links, Link{From: s.Nodes[i].Name, To: s.Nodes[j].Name, RTTus: (0.1 + r.Float64()/10) * 1e3,
				AvailMbps: av, PeakMbps: 1000, Measured: true})
		}
	}
	return s
}

// TestRankOrder_PermutesTheSelection: for seeded clusters (switches
// declared, partly declared, none), policies and job sizes, the
// decision's hosts are the policy's selection with the same count on
// every node, only reordered; with declared switches each switch's nodes
// are contiguous and in natural name order.
func TestRankOrder_PermutesTheSelection(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 40))
	for trial := range 60 {
		nodes := 4 + r.IntN(OracleMaxNodes-4)
		snap := randCluster(r, nodes, 1+r.IntN(4), 0.2*r.Float64())
		declare := trial % 3 // 0: all declared, 1: none, 2: some
		for i := range snap.Nodes {
			if declare == 1 || (declare == 2 && r.IntN(2) == 0) {
				snap.Nodes[i].Switch = ""
			}
		}
		pol := []string{PolicyNetload, PolicyPaper, policyOracle}[trial%3]
		req := Request{N: 1 + r.IntN(nodes*3), Policy: pol, Force: true, Oversubscribe: true, Seed: int64(trial)}
		name := fmt.Sprintf("trial %d (%s, n=%d, %d nodes, declare %d)", trial, pol, req.N, nodes, declare)

		d, err := place(snap, req, nil)
		if err != nil || d.Wait {
			t.Fatalf("%s: %+v %v", name, d, err)
		}
		want := selection(t, snap, req)
		got := map[string]int{}
		for _, h := range d.Hosts {
			if _, dup := got[h.Node]; dup {
				t.Fatalf("%s: %s twice in %v", name, h.Node, d.Hosts)
			}
			got[h.Node] = h.NP
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%s: hosts %v, want the selection %v reordered", name, d.Hosts, want)
		}
		sw := map[string]string{}
		for _, n := range snap.Nodes {
			sw[n.Name] = n.Switch
		}
		seen := map[string]bool{}
		for x, h := range d.Hosts {
			s := sw[h.Node]
			if s == "" {
				continue
			}
			prev := d.Hosts[max(0, x-1)].Node
			if x > 0 && sw[prev] == s {
				if natsort.Compare(prev, h.Node) >= 0 {
					t.Errorf("%s: %s before %s on %s, want name order", name, prev, h.Node, s)
				}
				continue
			}
			if seen[s] {
				t.Errorf("%s: %s's nodes split in %v", name, s, d.Hosts)
			}
			seen[s] = true
		}
	}
}

// selection is the policy's own answer to req before any reordering:
// each selected node and its count.
func selection(t *testing.T, s Snapshot, r Request) map[string]int {
	t.Helper()
	req, err := r.normalized()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := validateSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	p := newProblem(&s, req, idx)
	defer p.net.release()
	g, procs, _ := selectorFor(req.Policy, req.Seed).group(p)
	g, procs = dropEmpty(g, procs)
	out := map[string]int{}
	for x, i := range g {
		out[p.nodes[i].Name] = procs[x]
	}
	return out
}

// TestRankOrder_OrderOfAnyGroup: rankOrder of random groups with random
// counts is a permutation that carries each node's count, for every
// group shape, with one node, with nodes of no switch.
func TestRankOrder_OrderOfAnyGroup(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 40))
	for trial := range 200 {
		n := 1 + r.IntN(30)
		snap := randCluster(r, n, 1+r.IntN(5), 0)
		for i := range snap.Nodes {
			if r.IntN(4) == 0 {
				snap.Nodes[i].Switch = ""
			}
		}
		idx, err := validateSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		p := newProblem(&snap, Request{N: 1, WLT: 0.25, WBW: 0.75, Alpha: 0.3, Attr: &AttrWeights{M1: 1}}, idx)
		g := r.Perm(len(p.nodes))[:1+r.IntN(len(p.nodes))]
		procs := make([]int, len(g))
		for x := range procs {
			procs[x] = 1 + r.IntN(9)
		}
		count := map[int]int{}
		for x, i := range g {
			count[i] = procs[x]
		}
		og, op := p.rankOrder(slices.Clone(g), slices.Clone(procs))
		if len(og) != len(g) || len(op) != len(g) {
			t.Fatalf("trial %d: %d nodes, %d counts from %d", trial, len(og), len(op), len(g))
		}
		for x, i := range og {
			c, ok := count[i]
			if !ok || c != op[x] {
				t.Fatalf("trial %d: node %d with %d processes, want %d (in the group: %v)", trial, i, op[x], c, ok)
			}
			delete(count, i)
		}
		p.net.release()
	}
}

// TestRankOrder_SwitchDistanceNotTheGroupsNode: three switches in a line,
// sA - sB - sC, four nodes each: 100 Mbit/s inside a switch, 60 across
// one uplink, 15 across both, but b1's own link reads 10 with everyone.
// A group holding b1 alone of sB is ordered by the switches' distance,
// which sB's other nodes measure: sA, sB, sC. Measured by b1's pairs
// alone sB looks far from both and comes last, after sC, whose ranks
// would then follow sA's across both uplinks.
func TestRankOrder_SwitchDistanceNotTheGroupsNode(t *testing.T) {
	t.Parallel()
	var s Snapshot
	sw := map[string]string{}
	for _, x := range []string{"a", "b", "c"} {
		for k := 1; k <= 4; k++ {
			n := fmt.Sprintf("%s%d", x, k)
			sw[n] = "s" + strings.ToUpper(x)
			s.Nodes = append(s.Nodes, Node{Name: n, Alive: true, Switch: sw[n], Cores: 2, MHz: 3000, MemTotal: 16 << 30})
		}
	}
	for i, a := range s.Nodes {
		for _, b := range s.Nodes[i+1:] {
			av := 100.0
			switch {
			case a.Name == "b1" || b.Name == "b1":
				av = 10
			case a.Switch == b.Switch:
			case a.Switch == "sB" || b.Switch == "sB":
				av = 60
			default:
				av = 15
			}
			s.Links = append(s.Links, Link{From: a.Name, To: b.Name, RTTus: 100, AvailMbps: av, PeakMbps: 100, Measured: true})
		}
	}
	idx, err := validateSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	p := newProblem(&s, Request{N: 6, WLT: 0.25, WBW: 0.75, Alpha: 0.3, Attr: &AttrWeights{M1: 1}}, idx)
	defer p.net.release()
	var g []int
	for _, n := range []string{"c3", "b1", "a2", "c1", "a1", "c2"} {
		g = append(g, p.elig[idx[n]])
	}
	og, _ := p.rankOrder(g, []int{1, 1, 1, 1, 1, 1})
	var got []string
	for _, i := range og {
		got = append(got, p.nodes[i].Name)
	}
	if want := []string{"a1", "a2", "b1", "c1", "c2", "c3"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v (sA, sB, sC)", got, want)
	}
}

// TestChainBlocks_LineOfThree: switches B (block 0, first by name), A
// and C on a line A–B–C, one uplink costing 1 and both r. Above r = 2 the
// ends' sums (1 + r) are more than a third over the middle's (2) and the
// chain starts at an end, A, the first of the two by index; at r = 2 and
// under the sums are within the tie and the names decide: B first.
func TestChainBlocks_LineOfThree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    float64
		want []int
	}{{1, []int{0, 1, 2}}, {2, []int{0, 1, 2}}, {2.1, []int{1, 0, 2}}, {4, []int{1, 0, 2}}} {
		d := []float64{0, 1, 1, 1, 0, tc.r, 1, tc.r, 0}
		if got := chainBlocks(d, 3); !slices.Equal(got, tc.want) {
			t.Errorf("both uplinks at %v times one: chain %v, want %v", tc.r, got, tc.want)
		}
	}
}
