package main

import (
	"fmt"
	"math"
)

// growthExponent fits y = c·n^k by least squares on log y against log n
// and returns k: 1 is linear growth, 2 quadratic, 0 flat. It needs two
// sizes or more and positive values; otherwise it reports false.
func growthExponent(ns []int, ys []float64) (float64, bool) {
	if len(ns) != len(ys) || len(ns) < 2 {
		return 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range ns {
		if ns[i] <= 0 || ys[i] <= 0 || math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			return 0, false
		}
		x, y := math.Log(float64(ns[i])), math.Log(ys[i])
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	m := float64(len(ns))
	den := m*sxx - sx*sx
	if den == 0 {
		return 0, false // every size the same
	}
	return (m*sxy - sx*sy) / den, true
}

// extrapolate carries the last measured value y at size n to size to along
// exponent k.
func extrapolate(n int, y, k float64, to int) float64 {
	return y * math.Pow(float64(to)/float64(n), k)
}

func fmtExponent(k float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("n^%.2f", k)
}
