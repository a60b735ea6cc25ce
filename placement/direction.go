package placement

import "math"

// What a pair offers a job, direction by direction (issue 17).
//
// A bandwidth test measures both directions of a pair, at the time of the
// test; a node's traffic is sampled every few seconds, each direction
// apart. For each direction u->v netload takes
//
//	get(u->v) = min(avail(u->v), capOut(u) - tx(u), capIn(v) - rx(v))
//
// where avail is the latest test's rate that way, capOut(u) the fastest u
// was ever seen to send at and capIn(v) the fastest v was seen to receive
// at (the capacities of the two ends of the path), and tx, rx the latest
// traffic sample of the sender and the receiver. The min, not a
// difference, so traffic the test already saw is not counted twice: a
// test that ran under the flow and the flow itself agree, and a flow that
// started after the test (a link filled since) shows from the next sample.
// The pair then offers min(get(u->v), get(v->u)): MPI traffic goes both
// ways (halo exchanges, collectives), and a step waits for its slowest
// message, so a link full one way is as bad as a link full both ways.
//
// Across switches the path also crosses the uplink between the two
// switches (A->B for u on A, v on B), and get(u->v) is also at most what
// that uplink has free: upFree(A->B) = max(0, cap(A->B) - cross(A->B)).
// cap is the network model's capacity for the switch pair (Snapshot.Model,
// the same figure both ways: the model has no directions). The traffic
// crossing A->B is not measured per destination, but every bit of it is
// sent by a node of A and received by a node of B, so
//
//	cross(A->B) = min(sum of tx over A's nodes, sum of rx over B's nodes)
//
// bounds it from above (exact for one flow; a flow inside A adds nothing,
// B receives none of it). An upper bound, so the term errs towards calling
// an uplink busy. The sums are over every node of the snapshot on the
// switch, eligible or not: an ineligible node's traffic loads the uplink
// too. Only where something may cross (cross > 0) is there a term: with
// nothing crossing, the pair's own test (or the model's figure) already
// is what the uplink offers. Same-switch pairs, nodes without a switch and
// snapshots without a model have none.
//
// The `paper` policy keeps Eq. 2 as the paper measures it: the mean of
// the two directions' tests, no traffic term.

// dirAvail holds the per-node figures pairAvail needs, in Mbit/s.
type dirAvail struct {
	directional   bool
	capOut, capIn []float64
	tx, rx        []float64
	anyTraffic    bool
	// upFree[a*ns+b] is what the uplink from switch a to switch b has
	// free, Mbit/s (+Inf: no term); sw is each eligible node's switch
	// (-1: none). nil when no uplink carries traffic.
	upFree []float64
	sw     []int32
	ns     int
}

// pairAvail prepares what a pair offers; ij is the mean available rate
// from the lower eligible index to the higher, ji the other way.
func (w *network) pairAvail(s *Snapshot, elig []int, directional bool, capOut, capIn []float64) dirAvail {
	d := dirAvail{directional: directional, capOut: capOut, capIn: capIn}
	if !directional {
		return d
	}
	d.tx, d.rx = make([]float64, w.n), make([]float64, w.n)
	for k := range s.Nodes {
		if e := elig[k]; e >= 0 {
			// bytes/s to Mbit/s
			d.tx[e], d.rx[e] = s.Nodes[k].NetTx*8/1e6, s.Nodes[k].NetRx*8/1e6
			d.anyTraffic = d.anyTraffic || d.tx[e] > 0 || d.rx[e] > 0
		}
	}
	if s.Model != nil && d.anyTraffic {
		d.uplinks(s, elig, w.n)
	}
	return d
}

// uplinks sets what each uplink has free: the traffic each switch's
// nodes send and receive summed once (O(nodes + switches²)), not per pair.
func (d *dirAvail) uplinks(s *Snapshot, elig []int, n int) {
	m := s.Model
	ns := m.NS
	txSum, rxSum := make([]float64, ns), make([]float64, ns)
	for k := range s.Nodes {
		if g := m.Sw[k]; g >= 0 {
			txSum[g] += s.Nodes[k].NetTx * 8 / 1e6
			rxSum[g] += s.Nodes[k].NetRx * 8 / 1e6
		}
	}
	free := make([]float64, ns*ns)
	some := false
	for a := range ns {
		for b := range ns {
			k := a*ns + b
			free[k] = math.Inf(1)
			if a == b || !m.SwOK[k] || !(m.SwPeak[k] > 0) { // NaN too: a figure no derived link uses is not validated
				continue
			}
			if cross := min(txSum[a], rxSum[b]); cross > 0 {
				free[k], some = max(0, m.SwPeak[k]-cross), true
			}
		}
	}
	if !some {
		return
	}
	d.sw = make([]int32, n)
	for i := range d.sw {
		d.sw[i] = -1
	}
	for k, e := range elig {
		if e >= 0 {
			d.sw[e] = m.Sw[k]
		}
	}
	d.upFree, d.ns = free, ns
}

// upTerm is what the uplinks on the way between eligible nodes i and j
// have free each way (i->j, j->i); +Inf when no uplink is on the way.
func (d *dirAvail) upTerm(i, j int) (ij, ji float64) {
	a, b := d.sw[i], d.sw[j]
	if a < 0 || b < 0 {
		return math.Inf(1), math.Inf(1)
	}
	return d.upFree[int(a)*d.ns+int(b)], d.upFree[int(b)*d.ns+int(a)]
}

// get is what the pair (i, j) offers: the worse direction, each the
// min of its test and the free capacity of its two ends now.
func (d *dirAvail) get(i, j int, ij, ji float64) float64 {
	if !d.directional {
		return (ij + ji) / 2
	}
	if d.anyTraffic {
		ij = min(ij, max(0, d.capOut[i]-d.tx[i]), max(0, d.capIn[j]-d.rx[j]))
		ji = min(ji, max(0, d.capOut[j]-d.tx[j]), max(0, d.capIn[i]-d.rx[i]))
		if d.upFree != nil {
			uij, uji := d.upTerm(i, j)
			ij, ji = min(ij, uij), min(ji, uji)
		}
	}
	return min(ij, ji)
}
