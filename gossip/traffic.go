package gossip

import (
	"slices"

	"github.com/shoal-hpc/shoal/nodestate"
)

// What a table keeps of each node's traffic. A bandwidth test's reading
// depends on the traffic that shared its path then, and the tests that
// placement reads are up to a cycle old (minutes): the leader needs the
// traffic of that time, not only the latest sample.
// A step function is enough: a sample is kept only when it differs from
// the last kept one, so a steady flow is one point however long it runs,
// and maxTrafficPoints changes cover the last cycle on all but the
// busiest nodes. Lost history only makes the leader fall back on the
// fastest test (leader/stamp.go). A node's first sample has no rates (a
// rate needs two readings of the counters) and reads as idle; while it is
// the only point and idle, the next sample's rates replace its figures,
// so that a flow running when the agent started is in the history from
// its first sample, where the tests of a cold start look for it.
const (
	maxTrafficPoints = 32
	// A change is kept when either direction moved by more than
	// trafficRel of the larger of the two samples and by more than
	// trafficAbs bytes/s (1 Mbit/s): sampling noise on a steady flow is
	// not a change. (The node's own bandwidth tests are not in its
	// traffic at all: probe.Tracker leaves them out.)
	trafficRel = 0.1
	trafficAbs = 125_000.0
)

// addTraffic returns pts with d's sample appended when it starts a new
// step. pts is never written: a copy of the table's entry may be read
// while a later state is merged, so a new point goes into a new array.
func addTraffic(pts []nodestate.TrafficPoint, d nodestate.Dynamic) []nodestate.TrafficPoint {
	if d.SampledAt == 0 {
		return pts
	}
	p := nodestate.TrafficPoint{At: d.SampledAt, Rx: d.NetRxBytesPerSec, Tx: d.NetTxBytesPerSec}
	if len(pts) == 1 && pts[0].Rx == 0 && pts[0].Tx == 0 && p.At > pts[0].At && (p.Rx != 0 || p.Tx != 0) {
		return []nodestate.TrafficPoint{{At: pts[0].At, Rx: p.Rx, Tx: p.Tx}}
	}
	if n := len(pts); n > 0 {
		last := pts[n-1]
		if p.At <= last.At || (!moved(last.Rx, p.Rx) && !moved(last.Tx, p.Tx)) {
			return pts
		}
	}
	out := append(slices.Clip(pts), p)
	if len(out) > maxTrafficPoints {
		out = out[len(out)-maxTrafficPoints:]
	}
	return out
}

func moved(a, b float64) bool {
	d := max(a-b, b-a)
	return d > trafficAbs && d > trafficRel*max(a, b)
}
