package placement

import (
	"math"
	"testing"
)

// TestTransferCost pins netload's bandwidth term: the time a byte takes
// against the fastest link, less that time, floored at a tenth of the
// fastest, never below 0.
func TestTransferCost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		avail, top, want float64
	}{
		{1000, 1000, 0}, // as fast as the fastest
		{500, 1000, 1},  // half the rate: twice the time
		{250, 1000, 3},  // a quarter: four times
		{100, 1000, 9},  // a tenth: the floor
		{0, 1000, 9},    // nothing free: the floor, not +Inf
		{4000, 1000, 0}, // more than the fastest peak (a peak measured low): 0, not below
		{500, 0, 0},     // nothing measured: no term
		{500, math.NaN(), 0},
	} {
		if got := transferCost(c.avail, c.top); got != c.want {
			t.Errorf("transferCost(%v, %v) = %v, want %v", c.avail, c.top, got, c.want)
		}
	}
	// Convex where the complement is linear: the reason it replaced it.
	// Three pairs at 100 and three at 30 (of 200) cost more than six at
	// 60; with the complement, less (3*100 + 3*170 = 810 < 6*140 = 840).
	mixed := 3*transferCost(100, 200) + 3*transferCost(30, 200)
	even := 6 * transferCost(60, 200)
	if mixed <= even {
		t.Errorf("three pairs at 100 and three at 30 cost %v, six at 60 cost %v: want the mixed group dearer", mixed, even)
	}
}
