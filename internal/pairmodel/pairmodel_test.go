package pairmodel

import (
	"math/rand/v2"
	"testing"
)

// naive derives pair (i<j) straight from the rule on Tables, a lookup
// per pair: the reference Rows must equal.
func naive(t *Tables, i, j int) (rtt, avail, peak float64, ok bool) {
	var direct *Direct
	for k := range t.Direct[i] {
		if int(t.Direct[i][k].J) == j {
			direct = &t.Direct[i][k]
		}
	}
	if direct != nil && direct.BW || !t.Known[i] || !t.Known[j] || t.Sw[i] < 0 || t.Sw[j] < 0 {
		return 0, 0, 0, false
	}
	k := int(t.Sw[i])*t.NS + int(t.Sw[j])
	if !t.SwOK[k] {
		return 0, 0, 0, false
	}
	avail, peak, rtt = min(t.Avail[i], t.Avail[j]), min(t.Peak[i], t.Peak[j]), t.SwRTTus[k]
	if t.Sw[i] != t.Sw[j] {
		avail, peak = min(avail, t.SwAvail[k]), min(peak, t.SwPeak[k])
	}
	if direct != nil && direct.RTTus > 0 {
		rtt = direct.RTTus
	}
	return rtt, avail, peak, true
}

func randomTables(r *rand.Rand, n, ns int) *Tables {
	t := &Tables{NS: ns, Sw: make([]int32, n), Known: make([]bool, n), Avail: make([]float64, n), Peak: make([]float64, n),
		SwOK: make([]bool, ns*ns), SwAvail: make([]float64, ns*ns), SwPeak: make([]float64, ns*ns), SwRTTus: make([]float64, ns*ns),
		Direct: make([][]Direct, n)}
	for i := range n {
		t.Sw[i] = int32(r.IntN(ns+1)) - 1
		t.Known[i] = r.IntN(5) > 0
		t.Peak[i] = float64(100 * (1 + r.IntN(10)))
		t.Avail[i] = t.Peak[i] * r.Float64()
		for j := i + 1; j < n; j++ {
			if r.IntN(6) == 0 {
				t.Direct[i] = append(t.Direct[i], Direct{J: int32(j), BW: r.IntN(2) == 0, RTTus: float64(r.IntN(2)) * r.Float64()})
			}
		}
	}
	for k := range ns * ns {
		t.SwOK[k] = r.IntN(4) > 0
		t.SwPeak[k] = float64(100 * (1 + r.IntN(10)))
		t.SwAvail[k], t.SwRTTus[k] = t.SwPeak[k]*r.Float64(), r.Float64()
	}
	return t
}

// TestRowsMatchNaive: every pair Each and Rows derive (rows walked in
// order, and skipped or revisited out of order) is the naive rule's, bit
// for bit, and no other.
func TestRowsMatchNaive(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n, ns := r.IntN(40), r.IntN(5)
		if ns == 0 && n > 0 {
			ns = 1
		}
		tb := randomTables(r, n, ns)
		type fig struct{ rtt, avail, peak float64 }
		got := map[[2]int]fig{}
		tb.Each(n, func(i, j int, rtt, avail, peak float64) {
			if _, dup := got[[2]int{i, j}]; dup || i >= j {
				t.Fatalf("trial %d: pair (%d, %d) twice or out of order", trial, i, j)
			}
			got[[2]int{i, j}] = fig{rtt, avail, peak}
		})
		for i := range n {
			for j := i + 1; j < n; j++ {
				rtt, avail, peak, ok := naive(tb, i, j)
				g, gok := got[[2]int{i, j}]
				if ok != gok || ok && g != (fig{rtt, avail, peak}) {
					t.Fatalf("trial %d: pair (%d, %d) = %+v %v, want %+v %v", trial, i, j, g, gok, fig{rtt, avail, peak}, ok)
				}
			}
		}
		// Rows in any order, some twice: each Row clears the last one's directs.
		rows := tb.Rows(n)
		for range n {
			i := r.IntN(n)
			row := rows.Row(i)
			for j := i + 1; j < n; j++ {
				_, _, _, want := naive(tb, i, j)
				ok := false
				if row.OK() {
					var rtt, avail, peak float64
					rtt, avail, peak, ok = row.Pair(j)
					if ok && got[[2]int{i, j}] != (fig{rtt, avail, peak}) {
						t.Fatalf("trial %d: row %d out of order, pair %d differs", trial, i, j)
					}
				}
				if ok != want {
					t.Fatalf("trial %d: row %d out of order, pair %d derived %v, want %v", trial, i, j, ok, want)
				}
			}
		}
	}
}
