package placement_test

import (
	"math"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// The breakdown lists the groups netload compared, best first, the chosen
// one first, each with T made of its own terms; Why names the runner-up
// and the term that decided.
func TestBreakdown_Considered(t *testing.T) {
	t.Parallel()
	// A and B share a fast link; every other pair is slow. C and D are idle
	// but badly connected: the network term must beat the compute term.
	snap := placement.Snapshot{Nodes: []placement.Node{node("A", 2, 0.5), node("B", 2, 0.5), node("C", 2, 0), node("D", 2, 0)}}
	for _, p := range [][2]string{{"A", "C"}, {"A", "D"}, {"B", "C"}, {"B", "D"}, {"C", "D"}} {
		snap.Links = append(snap.Links, link(p[0], p[1], 2, 10, 1000))
	}
	snap.Links = append(snap.Links, link("A", "B", 0.1, 900, 1000))
	d, err := placement.Place(snap, placement.Request{N: 2, PPN: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := d.Score
	if len(b.Considered) < 2 {
		t.Fatalf("considered %+v: want the chosen group and at least one other", b.Considered)
	}
	win := b.Considered[0]
	if !win.Chosen || strings.Join(win.Nodes, ",") != "A,B" && strings.Join(win.Nodes, ",") != "B,A" {
		t.Fatalf("first candidate %+v: want the chosen group {A, B}", win)
	}
	if math.Abs(win.T-b.T) > 1e-9 || math.Abs(win.C-b.C) > 1e-9 || math.Abs(win.N-b.N) > 1e-9 {
		t.Fatalf("chosen candidate T %v C %v N %v, breakdown T %v C %v N %v: want the same", win.T, win.C, win.N, b.T, b.C, b.N)
	}
	for i, c := range b.Considered {
		if i > 0 && (c.Chosen || c.T < b.Considered[i-1].T) {
			t.Fatalf("candidate %d %+v: want unchosen groups after the chosen one, by T", i, c)
		}
		if want := b.Alpha*c.C/b.CRef + b.Beta*c.N/b.NRef; math.Abs(c.T-want) > 1e-9 {
			t.Fatalf("candidate %+v: T %v, its terms give %v", c, c.T, want)
		}
	}
	why := b.Why()
	if !strings.Contains(why, "network term") || !strings.Contains(why, "runner-up") {
		t.Fatalf("why %q: want the runner-up and the network term named", why)
	}
}

// Why names what each kind of policy did: the paper's ranks its groups by
// its own score, random compares none.
func TestBreakdown_WhyByPolicy(t *testing.T) {
	t.Parallel()
	snap := placement.Snapshot{Nodes: []placement.Node{node("A", 2, 0.5), node("B", 2, 0.5), node("C", 2, 0), node("D", 2, 0)}}
	snap.Links = fullMesh(snap.Nodes, 0.1, 500, 1000)
	for pol, want := range map[string]string{
		placement.PolicyPaper:  "by its own score",
		placement.PolicyRandom: "compares no groups",
	} {
		d, err := placement.Place(snap, placement.Request{N: 2, PPN: 1, Policy: pol, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Score.Considered) != 1 || !d.Score.Considered[0].Chosen {
			t.Fatalf("%s: considered %+v, want the chosen group alone", pol, d.Score.Considered)
		}
		if why := d.Score.Why(); !strings.Contains(why, want) {
			t.Errorf("%s: why %q, want %q", pol, why, want)
		}
	}
}
