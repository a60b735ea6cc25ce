package placement_test

import (
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

// TestNetload_IdleLoadsDoNotOutweighBandwidth: six idle nodes with their
// memory free, A-B the fastest pair (100 Mbit/s), C's pairs 95 and the
// others 60-75. C is at load 0, every other node at 0.02 of 2 cores: 1 %
// busy. Against a compute reference that follows the cluster's mean, C's
// 0 against the others' 1 % weighs like an idle node against a busy one
// and netload takes C with a slower pair; with the reference at least an
// eighth-busy cluster's the faster pair wins.
func TestNetload_IdleLoadsDoNotOutweighBandwidth(t *testing.T) {
	t.Parallel()
	names := []string{"A", "B", "C", "D", "E", "F"}
	var nodes []placement.Node
	for _, n := range names {
		nd := node(n, 2, 0.02)
		if n == "C" {
			nd = node(n, 2, 0)
		}
		nd.MemAvail = nodestate.Means{Now: 16 << 30, M1: 16 << 30, M5: 16 << 30, M15: 16 << 30}
		nodes = append(nodes, nd)
	}
	var links []placement.Link
	for i, a := range names {
		for j := i + 1; j < len(names); j++ {
			b := names[j]
			bw := 60 + 5*float64((i+j)%4)
			switch {
			case a == "A" && b == "B":
				bw = 100
			case a == "C" || b == "C":
				bw = 95
			}
			links = append(links, link(a, b, 0.1, bw, 100))
		}
	}
	d, err := placement.Place(placement.Snapshot{Nodes: nodes, Links: links}, placement.Request{N: 2, PPN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := hostsString(d); got != "A:1 B:1 " {
		t.Fatalf("hosts %q (T %.4f, c_norm %.4f, n_norm %.4f), want A:1 B:1: the 100 Mbit/s pair", got, d.Score.T, d.Score.CNorm, d.Score.NNorm)
	}
}
