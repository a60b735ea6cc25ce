package placement

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// oraclePolicy searches every subset of the usable nodes for the least T that
// has enough slots (or exactly k nodes): the optimum the heuristics are
// measured against. 2^V subsets, so only for small clusters.
type oraclePolicy struct{}

func (oraclePolicy) group(p *problem) ([]int, []int, int) {
	u := usable(p.slots)
	if sumOver(u, p.slots) < p.n {
		g := byCL(p, u)
		return g, p.fillInOrder(g), 1
	}
	g, c := exhaustive(p, u, func(slots, _ int) bool { return slots >= p.n })
	g = byCL(p, g)
	return g, p.fillInOrder(g), c
}

func (oraclePolicy) groupK(p *problem, k int) []int {
	u := eligibleAll(p)
	if k >= len(u) {
		return byCL(p, u)
	}
	g, _ := exhaustive(p, u, func(_, size int) bool { return size == k })
	return byCL(p, g)
}

// exhaustive walks all subsets of u; T(mask) extends T(mask without its lowest
// node) by that node's compute term and its network terms to the rest.
func exhaustive(p *problem, u []int, ok func(slots, size int) bool) ([]int, int) {
	v := len(u)
	full := 1 << v
	t := make([]float64, full)
	sl := make([]int, full)
	best, bt, seen := 0, math.Inf(1), 0
	for mask := 1; mask < full && p.work.spend(1); mask++ {
		low := bits.TrailingZeros(uint(mask))
		rest := mask &^ (1 << low)
		i := u[low]
		d := p.a * p.cl[i]
		for r := rest; r != 0; r &= r - 1 {
			d += p.b * p.net.cost(i, u[bits.TrailingZeros(uint(r))])
		}
		t[mask] = t[rest] + d
		sl[mask] = sl[rest] + p.slots[i]
		if ok(sl[mask], bits.OnesCount(uint(mask))) {
			seen++
			if t[mask] < bt {
				best, bt = mask, t[mask]
			}
		}
	}
	var g []int
	for r := best; r != 0; r &= r - 1 {
		g = append(g, u[bits.TrailingZeros(uint(r))])
	}
	slices.SortFunc(g, cmp.Compare)
	return g, seen
}
