package placement

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
// The `paper` policy keeps Eq. 2 as the paper measures it: the mean of
// the two directions' tests, no traffic term.

// dirAvail holds the per-node figures pairAvail needs, in Mbit/s.
type dirAvail struct {
	directional   bool
	capOut, capIn []float64
	tx, rx        []float64
	anyTraffic    bool
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
	return d
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
	}
	return min(ij, ji)
}
