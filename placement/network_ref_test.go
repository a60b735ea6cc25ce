package placement

import (
	"math"
	"slices"
)

// refBuildNetwork is buildNetwork as it was before the pair passes were
// made fast (commit f392bb3), kept as the reference the fast one must
// equal bit for bit. It aggregates the links among the eligible nodes. snapIdx maps names
// to snapshot positions, elig maps snapshot positions to eligible indices (-1: not
// eligible), group is the switch group of each eligible node.
//
// model, when not nil, is the Model of the snapshot the fast one reads
// (the reference reads s.Links only): the reference takes its switches and
// switch-pair capacities for the uplink term (refUplinks), which came
// after the speed work, so it is written here the straightforward way.
//
// The reference has its own copy of all the arithmetic the fast one
// reorganised for speed, and of what a pair offers (refDir.get, the
// formula of direction.go as written there): the point of a reference is
// that a change to the production code does not change it. It shares the
// plumbing that holds or reads figures without computing them (linkDirs,
// the CSR rows of mergeRows, which TestNetwork_SparseEqualsDense holds to
// the dense triangle, triIndex, gap), and the gap estimates
// (estimateGaps), which the speed work did not touch and the decision
// goldens pin.
func refBuildNetwork(s *Snapshot, model *PairModel, snapIdx map[string]int, elig []int, group []int32, ng int, wlt, wbw float64, globalPeak, dense bool) *network {
	n := len(group)
	w := &network{n: n, group: group, ng: ng, nodeMean: make([]float64, n), nodePeak: make([]float64, n)}
	nodeCnt := make([]int32, n)
	// One record per pair, so a link touches one cache line, not four.
	var acc []denseAcc
	if dense {
		m := n * (n - 1) / 2
		acc = make([]denseAcc, m)
	}
	var raw []pairAgg // sparse: one entry per link, merged into rows below
	if !dense {
		raw = make([]pairAgg, 0, len(s.Links))
	}
	// Links usually arrive grouped by From and ordered by To; guessing the next
	// index saves most map lookups on 500,000-link snapshots.
	resolve := func(name string, guess int) int {
		if guess >= 0 && guess < len(s.Nodes) && s.Nodes[guess].Name == name {
			return guess
		}
		if k, ok := snapIdx[name]; ok {
			return k
		}
		return -1
	}
	lastFrom, lastTo := -1, -1
	top := 0.0 // the fastest peak measured
	// Each node's link capacity per direction: the fastest it was seen to
	// send (capOut) and to receive (capIn) at, in Mbit/s.
	capOut, capIn := make([]float64, n), make([]float64, n)
	for li := range s.Links {
		l := &s.Links[li]
		if !l.Measured {
			continue
		}
		f := resolve(l.From, lastFrom)
		t := resolve(l.To, lastTo+1)
		lastFrom, lastTo = f, t
		if f < 0 || t < 0 {
			continue // a link to a node the snapshot no longer lists
		}
		i, j := elig[f], elig[t]
		if i < 0 || j < 0 || i == j {
			continue
		}
		av, avR, pk, pkR := linkDirs(l)
		capOut[i], capIn[j] = max(capOut[i], pk), max(capIn[j], pk)
		capOut[j], capIn[i] = max(capOut[j], pkR), max(capIn[i], pkR)
		if i > j {
			i, j = j, i
			av, avR, pk, pkR = avR, av, pkR, pk
		}
		top = max(top, l.PeakMbps)
		w.nodePeak[i], w.nodePeak[j] = max(w.nodePeak[i], l.PeakMbps), max(w.nodePeak[j], l.PeakMbps)
		if dense {
			k := w.triIndex(i, j)
			a := &acc[k]
			a.lt += float32(rttMs(l.RTTus))
			a.pk += float32(max(pk, pkR))
			a.av += float32(av)
			a.avR += float32(avR)
			a.cnt++
			continue
		}
		raw = append(raw, pairAgg{lt: rttMs(l.RTTus), peak: max(pk, pkR), avail: av, availR: avR, cnt: 1, i: int32(i), j: int32(j)})
	}
	if !dense {
		w.rows, w.vals = mergeRows(raw, n)
	}
	pairAvail := refPairAvail(w, s, model, elig, globalPeak, capOut, capIn)

	// Means per pair, the bandwidth term in place of the peak, the
	// normalising sums: against the fastest peak, the time a byte takes
	// (top/avail - 1, at least 0, avail at least a tenth of top); else
	// the paper's complement against the pair's own peak.
	complement := func(peak, avail float64) float64 {
		if globalPeak {
			if top <= 0 {
				return 0
			}
			return max(0, top/max(avail, 0.1*top)-1)
		}
		return max(0, peak-avail)
	}
	var sumLT, sumBW float64
	if dense {
		k := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				a := &acc[k]
				k++
				if a.cnt == 0 {
					continue
				}
				f := float32(a.cnt)
				a.lt = a.lt / f
				av := pairAvail.get(i, j, float64(a.av/f), float64(a.avR/f))
				a.av = float32(av)
				a.pk = float32(complement(float64(a.pk/f), av))
				sumLT += float64(a.lt)
				sumBW += float64(a.pk)
				w.measured++
			}
		}
	} else {
		for k := range w.vals {
			a := &w.vals[k]
			c := float64(a.cnt)
			a.lt = a.lt / c
			a.avail = pairAvail.get(int(a.i), int(a.j), a.avail/c, a.availR/c)
			a.peak = complement(a.peak/c, a.avail)
			sumLT += a.lt
			sumBW += a.peak
		}
		w.measured = len(w.vals)
	}
	if globalPeak && top > 0 {
		// T's terms: the RTT over the larger of the median measured
		// RTT (every stride-th pair in (i, j) order beyond 4,096; 1 when
		// it is 0) and the time 64 KiB take on the fastest link; the
		// transfer cost as it is.
		var lts []float64
		if dense {
			for k := range acc {
				if acc[k].cnt > 0 {
					lts = append(lts, float64(acc[k].lt))
				}
			}
		} else {
			for k := range w.vals {
				lts = append(lts, w.vals[k].lt)
			}
		}
		// The unit: at least the time 64 KiB take on the fastest link.
		sumLT, sumBW = max(refStridedMedian(lts, 1), 65536*8/1e3/top), 1
	}
	norm := func(l, b float64) float64 {
		v := 0.0
		if sumLT > 0 {
			v += wlt * l / sumLT
		}
		if sumBW > 0 {
			v += wbw * b / sumBW
		}
		return v
	}

	useGroups := ng <= groupMax
	if useGroups {
		w.missing = make([]float64, ng*ng)
	}
	seen := make([]bool, len(w.missing))
	total := 0.0
	var costs []float64 // every measured pair's, in (i, j) order
	note := func(i, j int, c float64) {
		total += c
		costs = append(costs, c)
		w.nodeMean[i] += c
		w.nodeMean[j] += c
		nodeCnt[i]++
		nodeCnt[j]++
		w.worst = max(w.worst, c)
		if useGroups {
			gi, gj := int(group[i]), int(group[j])
			for _, x := range [2]int{gi*ng + gj, gj*ng + gi} {
				w.missing[x] = max(w.missing[x], c)
				seen[x] = true
			}
		}
	}
	if dense {
		w.tri, w.acc = make([]float64, len(acc)), acc
		// avail() reads a.av of acc where cnt > 0, as triAvail held it
		k := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if a := &acc[k]; a.cnt > 0 {
					w.tri[k] = norm(float64(a.lt), float64(a.pk))
					note(i, j, w.tri[k])
				}
				k++
			}
		}
	} else {
		// The slice, not the map, so sums add up in the same order every time.
		for k := range w.vals {
			a := &w.vals[k]
			a.cost = norm(a.lt, a.peak)
			note(int(a.i), int(a.j), a.cost)
		}
	}
	floorSum := wlt + wbw // Eq. 2: the mean of a normalised pair
	if globalPeak && top > 0 {
		floorSum *= float64(max(1, w.measured)) // T: w_lt + w_bw
	}
	w.estimateGaps(total, nodeCnt, seen, floorSum)
	w.medianCost = refStridedMedian(costs, w.meanCost)
	return w
}

// refStridedMedian is the median of every stride-th value, from the
// first, stride the least that leaves at most 4,096; none when there is
// none or it is not above 0.
func refStridedMedian(vals []float64, none float64) float64 {
	stride := 1
	for (len(vals)+stride-1)/stride > 4096 {
		stride++
	}
	var smp []float64
	for k := 0; k < len(vals); k += stride {
		smp = append(smp, vals[k])
	}
	slices.Sort(smp)
	if len(smp) > 0 && smp[len(smp)/2] > 0 {
		return smp[len(smp)/2]
	}
	return none
}

// refDir holds what a pair offers is computed from (direction.go), in
// Mbit/s, per eligible node: its link's capacity out and in, its latest
// traffic out and in; and what each uplink has free (refUplinks).
type refDir struct {
	directional, anyTraffic bool
	capOut, capIn, tx, rx   []float64
	upFree                  []float64 // a*ns+b; nil when no uplink carries traffic
	sw                      []int32   // each eligible node's switch, -1 none
	ns                      int
}

// refPairAvail prepares what a pair offers.
func refPairAvail(w *network, s *Snapshot, model *PairModel, elig []int, directional bool, capOut, capIn []float64) *refDir {
	d := &refDir{directional: directional, capOut: capOut, capIn: capIn}
	if !directional {
		return d
	}
	d.tx, d.rx = make([]float64, w.n), make([]float64, w.n)
	for k := range s.Nodes {
		if e := elig[k]; e >= 0 {
			// bytes/s to Mbit/s
			d.tx[e], d.rx[e] = s.Nodes[k].NetTxBytesPerSec*8/1e6, s.Nodes[k].NetRxBytesPerSec*8/1e6
			d.anyTraffic = d.anyTraffic || d.tx[e] > 0 || d.rx[e] > 0
		}
	}
	if model != nil && d.anyTraffic {
		refUplinks(d, s, model, elig, w.n)
	}
	return d
}

// get is what the pair (i, j) offers, ij the mean available rate from i
// to j and ji back: the mean of the two for paper; for netload the worse
// direction, each at most what the sender's link has free out, the
// receiver's in, and the uplink on the way.
func (d *refDir) get(i, j int, ij, ji float64) float64 {
	if !d.directional {
		return (ij + ji) / 2
	}
	if d.anyTraffic {
		ij = min(ij, max(0, d.capOut[i]-d.tx[i]), max(0, d.capIn[j]-d.rx[j]))
		ji = min(ji, max(0, d.capOut[j]-d.tx[j]), max(0, d.capIn[i]-d.rx[i]))
		if d.upFree != nil && d.sw[i] >= 0 && d.sw[j] >= 0 {
			a, b := int(d.sw[i]), int(d.sw[j])
			ij, ji = min(ij, d.upFree[a*d.ns+b]), min(ji, d.upFree[b*d.ns+a])
		}
	}
	return min(ij, ji)
}

// refUplinks is the uplink term of direction.go, per switch pair from
// the nodes: what A's nodes send and B's receive in total, the smaller
// of the two taken off the pair's capacity where it is above zero.
func refUplinks(d *refDir, s *Snapshot, m *PairModel, elig []int, n int) {
	ns := m.NS
	free := make([]float64, ns*ns)
	some := false
	for a := range ns {
		for b := range ns {
			var tx, rx float64
			for k := range s.Nodes {
				if int(m.Sw[k]) == a {
					tx += s.Nodes[k].NetTxBytesPerSec * 8 / 1e6
				}
				if int(m.Sw[k]) == b {
					rx += s.Nodes[k].NetRxBytesPerSec * 8 / 1e6
				}
			}
			free[a*ns+b] = math.Inf(1)
			if c := min(tx, rx); a != b && m.SwOK[a*ns+b] && m.SwPeak[a*ns+b] > 0 && c > 0 {
				capacity := m.SwPeak[a*ns+b]
				if m.SwCap != nil && m.SwCap[a*ns+b] > capacity {
					capacity = m.SwCap[a*ns+b]
				}
				free[a*ns+b], some = max(0, min(capacity-c, m.SwPeak[a*ns+b])), true
			}
		}
	}
	if !some {
		return
	}
	d.sw = slices.Repeat([]int32{-1}, n)
	for k := range s.Nodes {
		if e := elig[k]; e >= 0 {
			d.sw[e] = m.Sw[k]
		}
	}
	d.upFree, d.ns = free, ns
}
