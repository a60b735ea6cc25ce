package main

import (
	"math"
	"testing"
)

func TestGrowthExponent(t *testing.T) {
	t.Parallel()
	ns := []int{100, 300, 1000}
	for _, tc := range []struct {
		name string
		f    func(n float64) float64
		want float64
	}{
		{"flat", func(float64) float64 { return 42 }, 0},
		{"linear", func(n float64) float64 { return 860 * n }, 1},
		{"quadratic", func(n float64) float64 { return n * (860 + 94*(n-1)) }, 1.96},
		{"logarithmic", func(n float64) float64 { return math.Log(n) }, 0.18},
	} {
		ys := make([]float64, len(ns))
		for i, n := range ns {
			ys[i] = tc.f(float64(n))
		}
		k, ok := growthExponent(ns, ys)
		if !ok || math.Abs(k-tc.want) > 0.01 {
			t.Errorf("%s: exponent %.3f (ok %v), want %.2f", tc.name, k, ok, tc.want)
		}
	}
	for _, bad := range []struct {
		ns []int
		ys []float64
	}{
		{[]int{100}, []float64{1}},
		{[]int{100, 100}, []float64{1, 2}},
		{[]int{100, 300}, []float64{1, 0}},
		{[]int{100, 300}, []float64{1}},
	} {
		if _, ok := growthExponent(bad.ns, bad.ys); ok {
			t.Errorf("growthExponent(%v, %v) fitted, want refused", bad.ns, bad.ys)
		}
	}
	if got := extrapolate(1000, 2e6, 2, 10000); math.Abs(got-2e8) > 1 {
		t.Errorf("extrapolate quadratic 2e6 at 1000 to 10000 = %g, want 2e8", got)
	}
}
