package netmodel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shoal-hpc/shoal/probeplan"
)

func m(a, b string, w float64) Measurement {
	return Measurement{A: a, B: b, AvailMbps: w, PeakMbps: w, BWAt: 1}
}

func TestModelPair(t *testing.T) {
	t.Parallel()
	asg := Assignment{"a1": {Name: "A"}, "a2": {Name: "A"}, "a3": {Name: "A"},
		"b1": {Name: "B"}, "b2": {Name: "B"}, "c1": {Name: "C"}, "c2": {Name: "C"}, "u": {}}
	ms := []Measurement{
		m("a1", "a2", 940), m("a2", "a3", 95), // a3 has a 100 Mbit/s port
		m("b1", "b2", 940),
		m("c1", "c2", 900),
		m("a1", "b1", 400), // switch pair A-B: one test
		m("b2", "c1", 250), // switch pair B-C
		{A: "a1", B: "a2", RTTus: 100}, {A: "a1", B: "b1", RTTus: 500},
	}
	md := Build(asg, ms, DefaultConfig())
	cases := []struct {
		a, b      string
		known     bool
		peak      float64
		uncertain bool
	}{
		{"a1", "a3", true, 95, false},  // same switch: the slower link
		{"a1", "a2", true, 940, false}, // measured pair, model agrees
		{"a2", "b2", true, 400, false}, // across: switch pair A-B
		{"a3", "b2", true, 95, false},  // across, but a3's own link is slower
		{"a1", "c2", true, 250, true},  // A-C untested: min(uplink A 400, uplink C 250), uncertain
		{"a1", "u", false, 0, false},   // unknown switch
		{"u", "u", false, 0, false},
	}
	for _, c := range cases {
		e := md.Pair(c.a, c.b)
		if e.Known != c.known || math.Abs(e.PeakMbps-c.peak) > 1e-9 || e.Uncertain != c.uncertain {
			t.Errorf("Pair(%s,%s) = %+v, want known %v peak %v uncertain %v", c.a, c.b, e, c.known, c.peak, c.uncertain)
		}
	}
	if e := md.Pair("a2", "a3"); e.RTTus != 100 {
		t.Errorf("same-switch RTT class: %v µs, want 100", e.RTTus)
	}
	if e := md.Pair("a2", "b2"); e.RTTus != 500 {
		t.Errorf("A-B RTT class: %v µs, want 500", e.RTTus)
	}
	if e := md.Pair("a2", "c1"); e.RTTus != 500 {
		t.Errorf("untested switch pair falls back to the cross-switch mean: %v µs, want 500", e.RTTus)
	}
	if _, p, ok := md.NodeCapacity("a2"); !ok || p != 940 {
		t.Errorf("NodeCapacity(a2) = %v %v", p, ok)
	}
	// a3's only test is a2-a3 at 95 against a2's 940: the model derives 95
	// (a3's link), so it agrees; nothing to retest.
	if d := md.Disagreements(); len(d) != 0 {
		t.Errorf("Disagreements = %v, want none", d)
	}
}

func TestModelDisagreement(t *testing.T) {
	t.Parallel()
	asg := Assignment{"a1": {Name: "A"}, "a2": {Name: "A"}, "a3": {Name: "A"}, "b1": {Name: "B"}, "b2": {Name: "B"}}
	ms := []Measurement{
		m("a1", "a2", 940), m("a2", "a3", 930), m("a1", "a3", 900),
		{A: "a1", B: "a3", AvailMbps: 900, PeakMbps: 900, BWAt: 1},
		m("b1", "b2", 940),
		m("a1", "b1", 300),
		// b2 is really on A (a wrong --switch): its test to a2 is as fast as a LAN pair.
		{A: "a2", B: "b2", AvailMbps: 935, PeakMbps: 935, BWAt: 2},
		// a bad cable between a1 and a3's ports? No: a3-a1 measured low later.
		{A: "a3", B: "b1", AvailMbps: 290, PeakMbps: 290, BWAt: 3},
	}
	md := Build(asg, ms, DefaultConfig())
	got := md.Disagreements()
	want := []probeplan.Pair{probeplan.NewPair("a2", "b2")}
	if len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("Disagreements = %v, want %v", got, want)
	}
	if e := md.Pair("a2", "b2"); !e.Uncertain {
		t.Fatalf("a pair the model disagrees with is not uncertain: %+v", e)
	}
	// A same-switch pair far below its links: a bad link between two good nodes.
	ms = append(ms, Measurement{A: "a1", B: "a2", AvailMbps: 100, PeakMbps: 100, BWAt: 5}) // peak stays 940 (best so far)
	ms = append(ms, m("a4", "a1", 950), m("a4", "a5", 950), m("a5", "a2", 950), m("a1", "a5", 120))
	asg["a4"], asg["a5"] = Switch{Name: "A"}, Switch{Name: "A"}
	md = Build(asg, ms, DefaultConfig())
	found := false
	for _, p := range md.Disagreements() {
		found = found || p == probeplan.NewPair("a1", "a5")
	}
	if !found {
		t.Fatalf("a1-a5 at 120 between 950 links not flagged: %v", md.Disagreements())
	}
}

// TestTablesMatchPair checks the bulk derivation (Tables, derived by
// internal/pairmodel as placement reads them) against Pair, the naive
// reference, on random sparse measurements of a random topology. The
// bulk path carries no Uncertain (placement has no use for it), so that
// field is Pair's alone.
func TestTablesMatchPair(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		var sizes []int
		for range 1 + r.IntN(5) {
			sizes = append(sizes, 1+r.IntN(6))
		}
		tp := newTopo(sizes...)
		names := sortedNames(append(tp.nodes(), "lost"))
		var ms []Measurement
		for _, a := range names {
			for _, b := range names {
				if a < b && r.IntN(3) == 0 && a != "lost" && b != "lost" {
					w := tp.bw(a, b)
					ms = append(ms, Measurement{A: a, B: b, AvailMbps: w * 0.9, PeakMbps: w, BWAt: int64(1 + r.IntN(9))})
				}
				if a < b && r.IntN(4) == 0 {
					ms = append(ms, Measurement{A: b, B: a, RTTus: 0.1 + r.Float64()})
				}
			}
		}
		md := Build(Infer(names, nil, ms, DefaultConfig()), ms, DefaultConfig())
		got := map[probeplan.Pair]Estimate{}
		md.Tables(names).Each(len(names), func(i, j int, rtt, avail, peak float64) {
			if !(i < j) {
				t.Fatalf("pair %d-%d out of order", i, j)
			}
			got[probeplan.NewPair(names[i], names[j])] = Estimate{Known: true, AvailMbps: avail, PeakMbps: peak, RTTus: rtt}
		})
		for i, a := range names {
			for _, b := range names[i+1:] {
				want := md.Pair(a, b)
				want.Uncertain = false
				g, ok := got[probeplan.NewPair(a, b)]
				switch {
				case md.Measured(a, b):
					if ok {
						t.Fatalf("seed %d: %s-%s measured directly but derived", seed, a, b)
					}
				case !want.Known:
					if ok {
						t.Fatalf("seed %d: %s-%s derived %+v, Pair says unknown", seed, a, b, g)
					}
				case !ok || g != want:
					t.Fatalf("seed %d: %s-%s Tables %+v (%v), Pair %+v", seed, a, b, g, ok, want)
				}
			}
		}
	}
}

// TestModelCarried: what the tests between two switches carried (rate
// plus crossing traffic, the leader's stamps) is kept per direction, the
// lower median over the tests that way, and handed to placement as SwCap; a
// same-switch stamp, an unstamped test and a non-finite one are not.
func TestModelCarried(t *testing.T) {
	t.Parallel()
	asg := Assignment{"a1": {Name: "A"}, "a2": {Name: "A"}, "b1": {Name: "B"}, "b2": {Name: "B"}, "c1": {Name: "C"}}
	st := func(a, b string, ab, ba float64) Measurement {
		x := m(a, b, 40)
		x.CarriedAB, x.CarriedBA = ab, ba
		return x
	}
	ms := []Measurement{
		st("a1", "b1", 60, 45), st("a2", "b2", 70, 0), st("b2", "a1", 40, 80), // A->B: 60, 70, 80; B->A: 45, 40
		st("a1", "a2", 999, 999),       // same switch: no uplink
		st("a1", "c1", math.Inf(1), 0), // not finite
		m("b1", "c1", 30),              // not stamped
	}
	md := Build(asg, ms, DefaultConfig())
	for _, c := range []struct {
		from, to string
		want     float64
		ok       bool
	}{{"A", "B", 70, true}, {"B", "A", 40, true}, {"A", "C", 0, false}, {"B", "C", 0, false}, {"A", "A", 0, false}} {
		if got, ok := md.Carried(c.from, c.to); ok != c.ok || got != c.want {
			t.Errorf("Carried(%s, %s) = %v %v, want %v %v", c.from, c.to, got, ok, c.want, c.ok)
		}
	}
	tb := md.Tables([]string{"a1", "b1", "c1"})
	sw := map[string]int{}
	for i, n := range []string{"a1", "b1", "c1"} {
		sw[n] = int(tb.Sw[i])
	}
	at := func(a, b string) float64 { return tb.SwCap[sw[a]*tb.NS+sw[b]] }
	if at("a1", "b1") != 70 || at("b1", "a1") != 40 || at("a1", "c1") != 0 {
		t.Errorf("SwCap A->B %v, B->A %v, A->C %v; want 70, 40 (the lower median of two), 0", at("a1", "b1"), at("b1", "a1"), at("a1", "c1"))
	}
	if Build(asg, []Measurement{m("a1", "b1", 40)}, DefaultConfig()).Tables([]string{"a1", "b1"}).SwCap != nil {
		t.Error("SwCap without a stamped test: want nil (placement then reads SwPeak alone)")
	}
}
