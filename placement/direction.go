package placement

import "math"

// What a pair offers a job, direction by direction.
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
// cap is the network model's capacity for the switch pair, that way: the
// larger of the fastest test between the two switches (SwPeak, the same
// figure both ways) and what the tests that way carried with the traffic
// that crossed meanwhile (SwCap: rate plus that traffic), and the result
// is at most SwPeak. Without SwCap a test that ran under a flow that is
// still crossing counts the flow twice: lab12's sw2->sw1 test read 36.6
// Mbit/s of a 60 Mbit/s uplink under a 30 Mbit/s flow, its peak was 51,
// and 51 - 30 left n06's pairs 21 where a job gets 30 (lab12 on the
// testbed, docs/design/experiment.md); with it, min(66.6 - 30, 51) = 36.6, what the test read. The traffic
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

// dirAvail holds the per-node figures get needs, in Mbit/s.
type dirAvail struct {
	directional bool
	// traffic: some eligible node sends or receives. Then freeOut and
	// freeIn are what each eligible node's link has free each way now,
	// capOut - tx and capIn - rx (at least 0).
	traffic         bool
	freeOut, freeIn []float64
	// upFree[a*ns+b] is what the uplink from switch a to switch b has
	// free, Mbit/s (+Inf: no term); sw is each eligible node's switch
	// (-1: none). nil when no uplink carries traffic.
	upFree []float64
	sw     []int32
	ns     int
}

// pairAvail prepares what a pair offers from each eligible node's link
// capacity each way (capOut, capIn) and the snapshot's traffic.
func (w *network) pairAvail(s *Snapshot, elig []int, directional bool, capOut, capIn []float64) dirAvail {
	d := dirAvail{directional: directional}
	if !directional {
		return d
	}
	tx, rx := make([]float64, w.n), make([]float64, w.n)
	for k := range s.Nodes {
		if e := elig[k]; e >= 0 {
			// bytes/s to Mbit/s
			tx[e], rx[e] = s.Nodes[k].NetTxBytesPerSec*8/1e6, s.Nodes[k].NetRxBytesPerSec*8/1e6
			d.traffic = d.traffic || tx[e] > 0 || rx[e] > 0
		}
	}
	if !d.traffic {
		return d
	}
	d.freeOut, d.freeIn = make([]float64, w.n), make([]float64, w.n)
	for i := range w.n {
		d.freeOut[i], d.freeIn[i] = max(0, capOut[i]-tx[i]), max(0, capIn[i]-rx[i])
	}
	if s.Model != nil {
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
			txSum[g] += s.Nodes[k].NetTxBytesPerSec * 8 / 1e6
			rxSum[g] += s.Nodes[k].NetRxBytesPerSec * 8 / 1e6
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
				c := m.SwPeak[k]
				if m.SwCap != nil {
					c = max(c, m.SwCap[k])
				}
				// Never above the fastest test: a stamp can overstate the
				// capacity (a TCP test takes bandwidth from the flows it
				// competes with; the crossing traffic is an upper bound),
				// and it must not lift an uplink above anything seen on it.
				free[k], some = max(0, min(c-cross, m.SwPeak[k])), true
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
	if d.sw[i] < 0 || d.sw[j] < 0 {
		return math.Inf(1), math.Inf(1)
	}
	a, b := int(d.sw[i]), int(d.sw[j])
	return d.upFree[a*d.ns+b], d.upFree[b*d.ns+a]
}

// get is what the pair (i, j) offers, ij the mean available rate from
// the lower eligible index to the higher and ji the other way: their
// mean for paper; for netload the worse direction, under traffic each
// also at most what the uplink on the way (upTerm) and its two ends
// (offer) have free.
func (d *dirAvail) get(i, j int, ij, ji float64) float64 {
	switch {
	case !d.directional:
		return (ij + ji) / 2
	case !d.traffic:
		return min(ij, ji)
	}
	if d.upFree != nil {
		uij, uji := d.upTerm(i, j)
		ij, ji = min(ij, uij), min(ji, uji)
	}
	return offer(ij, ji, d.freeOut[i], d.freeIn[i], d.freeOut[j], d.freeIn[j])
}

// offer is what a pair (i, j) offers under traffic: each direction's
// rate (ij: i->j, already capped by the uplink on the way, if any) at
// most what its sender's link has free out and its receiver's in, and
// the worse of the two directions. The one formula of get and
// densePairs, which hoists a row's own figures and calls it inlined; the
// uplink cap stays outside, so a pair with no uplink on the way (most,
// and all of a snapshot with none busy) takes no min for it.
func offer(ij, ji, outI, inI, outJ, inJ float64) float64 {
	return min(min(ij, outI, inJ), min(ji, outJ, inI))
}
