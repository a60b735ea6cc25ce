package placement_test

import (
	"fmt"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// The breakdown lists each pair of a small group with what it offers and
// costs, an unmeasured pair as such; a group of 16 nodes lists its 120
// pairs, one of 17 none.
func TestBreakdown_PairScores(t *testing.T) {
	t.Parallel()
	snap := placement.Snapshot{
		Nodes: []placement.Node{node("A", 1, 0), node("B", 1, 0), node("C", 1, 0)},
		Links: []placement.Link{link("A", "B", 0.1, 80, 100), link("A", "C", 0.1, 40, 100)},
	}
	d, err := placement.Place(snap, placement.Request{N: 3, PPN: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]placement.PairScore{}
	for _, p := range d.Score.PairScores {
		got[p.A+"-"+p.B] = p
	}
	if len(got) != 3 || got["A-B"].OfferMbps != 80 || !got["A-B"].Measured || got["A-C"].OfferMbps != 40 ||
		got["B-C"].Measured || got["B-C"].OfferMbps != 0 || !(got["A-C"].Cost > got["A-B"].Cost) {
		t.Fatalf("pair scores %+v: want A-B 80, A-C 40 costing more, B-C unmeasured", d.Score.PairScores)
	}

	for _, tc := range []struct{ nodes, pairs int }{{16, 120}, {17, 0}} {
		var big placement.Snapshot
		for i := range tc.nodes {
			big.Nodes = append(big.Nodes, node(fmt.Sprintf("n%02d", i), 1, 0))
		}
		big.Links = fullMesh(big.Nodes, 0.1, 100, 100)
		d, err = placement.Place(big, placement.Request{N: tc.nodes, PPN: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Hosts) != tc.nodes || len(d.Score.PairScores) != tc.pairs {
			t.Fatalf("%d hosts: %d pair scores, want %d", len(d.Hosts), len(d.Score.PairScores), tc.pairs)
		}
	}
}
