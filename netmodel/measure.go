package netmodel

import (
	"cmp"
	"slices"

	"github.com/shoal-hpc/shoal/probeplan"
)

// Measurement is one node's view of one peer, as a network row holds it.
// Both ends' rows may report the same pair: they are merged.
type Measurement struct {
	A, B string
	// AvailMbps is the latest bandwidth test, PeakMbps the best so far.
	AvailMbps, PeakMbps float64
	// RTTus is the measured round trip, µs, 0 when none.
	RTTus float64
	// BWAt is when the bandwidth was last tested (any unit, larger is
	// later); 0 when the pair has no bandwidth test.
	BWAt int64
	// OutMbps and InMbps are the latest test's rate from A to B and from
	// B to A, OutAt and InAt when each was taken (BWAt's unit); 0 when
	// that way was not tested. The leader stamps Carried from them.
	OutMbps, InMbps float64
	OutAt, InAt     int64
	// CarriedAB and CarriedBA are what the path carried from A to B and
	// from B to A during the latest test that way, Mbit/s: the test's
	// rate plus the traffic that crossed the uplinks between A's and B's
	// switches in that direction meanwhile. 0 when not known (no test,
	// the traffic of that time is not known, or A and B share a switch).
	CarriedAB, CarriedBA float64
}

// pairData is the merged record of one unordered pair.
type pairData struct {
	avail, peak, rtt float64
	at               int64
	rttN             int
}

// merge folds ms into one record per unordered pair with a bandwidth
// test: the best peak, the latest available figure, the mean RTT. Pairs
// with only an RTT keep it (for the RTT classes) with at = 0.
func merge(ms []Measurement) map[probeplan.Pair]*pairData {
	out := make(map[probeplan.Pair]*pairData, len(ms))
	for _, m := range ms {
		if m.A == "" || m.B == "" || m.A == m.B {
			continue
		}
		p := probeplan.NewPair(m.A, m.B)
		d := out[p]
		if d == nil {
			d = &pairData{}
			out[p] = d
		}
		if m.RTTus > 0 {
			d.rtt += m.RTTus
			d.rttN++
		}
		if m.BWAt == 0 || !(m.PeakMbps > 0 || m.AvailMbps > 0) {
			continue
		}
		d.peak = max(d.peak, m.PeakMbps, m.AvailMbps)
		if m.BWAt > d.at || (m.BWAt == d.at && m.AvailMbps > d.avail) {
			d.at, d.avail = m.BWAt, m.AvailMbps
		}
	}
	for _, d := range out {
		if d.rttN > 0 {
			d.rtt /= float64(d.rttN)
		}
	}
	return out
}

// sortedPairs returns the keys of pairs that have a bandwidth test,
// sorted: every computation over them is in this order, so the result
// does not depend on map iteration.
func sortedPairs(pairs map[probeplan.Pair]*pairData) []probeplan.Pair {
	out := make([]probeplan.Pair, 0, len(pairs))
	for p, d := range pairs {
		if d.at != 0 {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(x, y probeplan.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	return out
}
