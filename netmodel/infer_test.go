package netmodel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// topo is a synthetic cluster: switch of each node, node link speed,
// uplink speed of each switch.
type topo struct {
	sw     map[string]string
	link   map[string]float64
	uplink map[string]float64
}

// newTopo builds switches named s0, s1... with the given sizes; nodes are
// "<switch>n<k>", links 1000 Mbit/s, uplinks 400.
func newTopo(sizes ...int) topo {
	t := topo{sw: map[string]string{}, link: map[string]float64{}, uplink: map[string]float64{}}
	for s, k := range sizes {
		name := fmt.Sprintf("s%d", s)
		t.uplink[name] = 400
		for i := range k {
			n := fmt.Sprintf("%sn%02d", name, i)
			t.sw[n], t.link[n] = name, 1000
		}
	}
	return t
}

func (t topo) nodes() []string {
	var out []string
	for n := range t.sw {
		out = append(out, n)
	}
	return out
}

// bw is what a test between a and b reads.
func (t topo) bw(a, b string) float64 {
	w := min(t.link[a], t.link[b])
	if t.sw[a] != t.sw[b] {
		w = min(w, t.uplink[t.sw[a]], t.uplink[t.sw[b]])
	}
	return w
}

// measureAll tests every pair with multiplicative noise of ±noise.
func (t topo) measureAll(r *rand.Rand, noise float64) []Measurement {
	ns := sortedNames(t.nodes())
	var ms []Measurement
	for i, a := range ns {
		for _, b := range ns[i+1:] {
			w := t.bw(a, b) * (1 + noise*(2*r.Float64()-1))
			ms = append(ms, Measurement{A: a, B: b, AvailMbps: w, PeakMbps: w, BWAt: 1})
		}
	}
	return ms
}

func sortedNames(ns []string) []string {
	out := append([]string(nil), ns...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// sameGrouping reports whether got groups the nodes exactly as want's
// switches do (names aside), and names the first node that differs.
func sameGrouping(t topo, got Assignment) (bool, string) {
	rep := map[string]string{} // true switch → inferred name
	back := map[string]string{}
	for _, n := range sortedNames(t.nodes()) {
		g := got[n].Name
		if g == "" {
			return false, n + " unknown"
		}
		if r, ok := rep[t.sw[n]]; ok && r != g {
			return false, n
		}
		if b, ok := back[g]; ok && b != t.sw[n] {
			return false, n
		}
		rep[t.sw[n]], back[g] = g, t.sw[n]
	}
	return true, ""
}

func TestInfer(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	r := rand.New(rand.NewPCG(1, 2))
	clean := newTopo(4, 4, 4)
	noisy := newTopo(8, 8, 8, 8)
	single := newTopo(4, 4, 1)
	fabric := newTopo(4, 4)
	for s := range fabric.uplink {
		fabric.uplink[s] = 10000 // non-blocking: switches cannot be told apart
	}
	// A contended same-switch test (a bulk flow on s0n00's link at the time).
	contended := newTopo(4, 4)
	cms := contended.measureAll(r, 0)
	for i := range cms {
		if cms[i].A == "s0n00" && cms[i].B == "s0n01" {
			cms[i].PeakMbps, cms[i].AvailMbps = 150, 150
		}
	}
	// A fast test across an idle uplink that happened to look like a LAN pair.
	lucky := newTopo(4, 4)
	lms := lucky.measureAll(r, 0)
	for i := range lms {
		if lms[i].A == "s0n00" && lms[i].B == "s1n00" {
			lms[i].PeakMbps = 990
		}
	}
	cases := []struct {
		name  string
		topo  topo
		ms    []Measurement
		check func(t *testing.T, a Assignment)
	}{
		{"clean 3x4", clean, clean.measureAll(r, 0), grouped(clean)},
		{"noisy ±20% 4x8", noisy, noisy.measureAll(r, 0.2), grouped(noisy)},
		{"single-node switch", single, single.measureAll(r, 0.05), grouped(single)},
		{"contended same-switch test", contended, cms, grouped(contended)},
		{"one lucky cross test", lucky, lms, grouped(lucky)},
		{"non-blocking fabric is one switch", fabric, fabric.measureAll(r, 0.05), func(t *testing.T, a Assignment) {
			first := a["s0n00"].Name
			for n, s := range a {
				if s.Name != first || !s.Inferred {
					t.Fatalf("%s on %+v, want every node on %q (one switch)", n, s, first)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, Infer(c.topo.nodes(), nil, c.ms, cfg))
		})
	}

	t.Run("unknown: no measurement, or a single one", func(t *testing.T) {
		tp := newTopo(3, 3)
		ms := tp.measureAll(r, 0)
		ms = append(ms, Measurement{A: "x", B: "s0n00", PeakMbps: 300, AvailMbps: 300, BWAt: 1})
		a := Infer(append(tp.nodes(), "x", "y"), nil, ms, cfg)
		if a["y"] != (Switch{}) || a["x"] != (Switch{}) {
			t.Fatalf("x = %+v, y = %+v; want both unknown", a["x"], a["y"])
		}
		if a["s0n00"].Name == "" {
			t.Fatalf("s0n00 unknown")
		}
	})
	t.Run("declared switches kept, undeclared join them", func(t *testing.T) {
		tp := newTopo(4, 4)
		decl := map[string]string{"s0n00": "rackA", "s0n01": "rackA", "s1n00": "rackB"}
		a := Infer(tp.nodes(), decl, tp.measureAll(r, 0.1), cfg)
		for n, s := range a {
			want := Switch{Name: "rackA", Inferred: decl[n] == ""}
			if tp.sw[n] == "s1" {
				want.Name = "rackB"
			}
			if s != want {
				t.Fatalf("%s: %+v, want %+v", n, s, want)
			}
		}
	})
	t.Run("two declared switches never merge", func(t *testing.T) {
		tp := newTopo(2, 2)
		tp.uplink["s0"], tp.uplink["s1"] = 5000, 5000
		decl := map[string]string{"s0n00": "a", "s1n00": "b"}
		a := Infer(tp.nodes(), decl, tp.measureAll(r, 0), cfg)
		if a["s0n00"].Name != "a" || a["s1n00"].Name != "b" {
			t.Fatalf("declared switches moved: %+v", a)
		}
	})
	t.Run("order of inputs does not matter", func(t *testing.T) {
		tp := newTopo(5, 5, 2)
		ms := tp.measureAll(r, 0.2)
		want := Infer(tp.nodes(), nil, ms, cfg)
		for k := range 5 {
			rr := rand.New(rand.NewPCG(uint64(k), 9))
			sh := append([]Measurement(nil), ms...)
			rr.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
			for i := range sh {
				if rr.IntN(2) == 0 {
					sh[i].A, sh[i].B = sh[i].B, sh[i].A
				}
			}
			got := Infer(tp.nodes(), nil, sh, cfg)
			for n := range want {
				if got[n] != want[n] {
					t.Fatalf("shuffle %d: %s on %+v, was %+v", k, n, got[n], want[n])
				}
			}
		}
	})
}

func grouped(tp topo) func(t *testing.T, a Assignment) {
	return func(t *testing.T, a Assignment) {
		t.Helper()
		if ok, n := sameGrouping(tp, a); !ok {
			t.Fatalf("grouping differs from the true switches at %s: %+v", n, a)
		}
		for n, s := range a {
			if !s.Inferred {
				t.Fatalf("%s: %+v not marked inferred", n, s)
			}
		}
	}
}
