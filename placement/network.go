package placement

import (
	"cmp"
	"slices"
	"sync"
)

// Above denseMaxNodes the pair table is a map keyed by pair, so a 10,000-node
// snapshot with a sparse link table never allocates V^2 entries.
const (
	denseMaxNodes = 1024
	groupMax      = 256 // beyond this many switches unmeasured pairs use the global estimate
)

// network holds NL_(u,v) (Eq. 2) for the eligible nodes from the mean latency
// and a bandwidth term of each measured pair, repeated measurements averaged
// per direction, available being what the pair offers (direction.go: the
// worse direction for netload, the mean of the two for paper), weighted by
// w_lt and w_bw. The paper divides each term by its sum over all measured
// pairs, and the paper policy keeps that. T and netload do not: the spread
// of the RTTs then weighs as much as the spread of the rates however small
// the RTTs are, and on a loaded host they are scheduler noise.
// T's latency term is a pair's RTT in units of the larger of the median
// measured RTT and the time 64 KiB take on the fastest link, its bandwidth
// term the transfer cost below (already a ratio), neither divided by a sum
// (TestCasesRTTNoise). The median: the term is 1 for a typical pair whatever
// the link speed, and a spread of RTTs within the typical RTT is not taken
// for a signal. The message time: an RTT far below what a message takes to
// transfer does not slow a bandwidth-bound exchange, and pings on a loaded
// host spike to 20-30 times a median of a tenth of a millisecond (the
// testbed's degrade10, TestCasesRTTSpikes).
//
// The paper's bandwidth term is the complement against the pair's own peak
// (peak - available), and the paper policy keeps it. T and netload take
// instead the time a byte takes on the pair, against the fastest peak
// measured in the cluster (transferCost: top/available - 1). Two reasons,
// each measured (docs/design/placement.md, "the fastest link as NL's
// bandwidth reference" and "the time a byte takes"):
//   - Against the pair's own peak, a half-used 10 Gbit/s pair (5,000 Mbit/s
//     free) ranks worse than an idle 100 Mbit/s one; against the cluster's
//     fastest, pairs are ordered by what they offer.
//   - A group's N is a sum over its pairs, and a linear term lets fast pairs
//     pay for slow ones: three 100 Mbit/s pairs and three 30 Mbit/s pairs sum
//     to less complement than six 60 Mbit/s pairs, yet a bulk-synchronous
//     program on the first group waits on its 30 Mbit/s messages every step.
//     Time per byte is what the program pays, and it grows as the rate
//     falls: the slow pairs weigh what they cost.
//
// An unmeasured pair is never a perfect link: it costs as much as the worst
// measured pair between the same two switches, or, when no such pair is measured,
// the worst measured pair anywhere; when that is zero (or nothing is measured)
// it costs (w_lt+w_bw)/max(1, measured pairs), the mean of a normalised pair,
// under Eq. 2's sums (paper), and w_lt+w_bw under T's terms (a pair with the
// median RTT at half the fastest rate).
type network struct {
	n   int
	tri []float64 // dense and eager: cost of pair (i<j), gaps already filled; lazy: nil
	// dense and lazy: cost computes a pair's cost from acc with these, as
	// denseCosts does
	wlt, wbw, sumLT, sumBW float64
	acc                    []denseAcc // dense: per pair (i<j) its figures; av is what it offers, cnt 0 = unmeasured
	rows                   []int32    // sparse: vals[rows[i]:rows[i+1]] are the pairs (i, j>i), sorted by j
	vals                   []pairAgg  // sparse: measured pairs
	group                  []int32
	ng                     int
	missing                []float64 // ng*ng estimate for unmeasured pairs, nil when ng > groupMax
	worst                  float64   // global estimate for unmeasured pairs
	measured               int
	meanCost               float64   // mean cost over measured pairs
	medianCost             float64   // median cost over measured pairs (a sample of them beyond medianSample)
	nodeMean               []float64 // mean cost of each node's measured pairs (gap estimate when none)
	nodePeak               []float64 // fastest peak Mbps measured on any of the node's pairs (0: none)
}

// denseAcc sums a pair's measurements, the available rate of each
// direction apart (av: from the lower index to the higher) and the peak
// of the faster; float32 keeps it to 20 bytes, and a measurement has
// fewer significant digits than that anyway.
type denseAcc struct {
	lt, pk, av, avR float32
	cnt             int32
}

// accPool keeps the pair records of finished placements (10 MB at 1,000
// nodes): a leader placing a queue of jobs, or placing every round,
// clears one instead of making one, and the garbage collector runs half
// as often. place returns them (release); sync.Pool drops them at the
// next collections when placements stop.
var accPool sync.Pool

// getAcc returns m zeroed pair records.
func getAcc(m int) []denseAcc {
	if p, ok := accPool.Get().(*[]denseAcc); ok && cap(*p) >= m {
		acc := (*p)[:m]
		clear(acc)
		return acc
	}
	return make([]denseAcc, m)
}

// release gives the network's pair records back for the next placement;
// the network must not be used after.
func (w *network) release() {
	if w != nil && w.acc != nil {
		acc := w.acc
		w.acc = nil
		accPool.Put(&acc)
	}
}

// pairAgg is one pair of the sparse table; avail is the direction
// i->j, availR j->i, peak the faster direction's.
type pairAgg struct {
	lt, peak, avail float64
	availR          float64
	cnt, i, j       int32
	cost            float64
}

// linkDirs reads a link's two directions, From->To first: the directional
// figures where the row had them, else the undirected ones for both.
func linkDirs(l *Link) (av, avR, pk, pkR float64) {
	av, avR, pk, pkR = l.AvailMbps, l.AvailMbps, l.PeakMbps, l.PeakMbps
	if l.OutMbps > 0 {
		av = float64(l.OutMbps)
	}
	if l.InMbps > 0 {
		avR = float64(l.InMbps)
	}
	if l.PeakOutMbps > 0 {
		pk = float64(l.PeakOutMbps)
	}
	if l.PeakInMbps > 0 {
		pkR = float64(l.PeakInMbps)
	}
	return av, avR, pk, pkR
}

// find returns the position of pair (i<j) in vals, or -1.
func (w *network) find(i, j int) int {
	lo, hi := int(w.rows[i]), int(w.rows[i+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(w.vals[m].j) < j {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < int(w.rows[i+1]) && int(w.vals[lo].j) == j {
		return lo
	}
	return -1
}

func (w *network) triIndex(i, j int) int { return i*(2*w.n-i-1)/2 + (j - i - 1) }

// cost is NL between eligible nodes i and j.
func (w *network) cost(i, j int) float64 {
	if i == j {
		return 0
	}
	if i > j {
		i, j = j, i
	}
	if w.tri != nil {
		return w.tri[w.triIndex(i, j)]
	}
	if w.acc != nil {
		if a := &w.acc[w.triIndex(i, j)]; a.cnt > 0 {
			return pairCost(float64(a.lt), float64(a.pk), w.wlt, w.wbw, w.sumLT, w.sumBW)
		}
		return w.gap(i, j)
	}
	if k := w.find(i, j); k >= 0 {
		return w.vals[k].cost
	}
	return w.gap(i, j)
}

// pairCost is NL of a measured pair from its latency and bandwidth term,
// each divided by its scale (Eq. 2's sums over the measured pairs for
// paper; the median RTT and 1 for T), weighted. One function, so the
// eager table and the lazy cost agree to the bit.
func pairCost(lt, bw, wlt, wbw, sumLT, sumBW float64) float64 {
	c := 0.0
	if sumLT > 0 {
		c += wlt * lt / sumLT
	}
	if sumBW > 0 {
		c += wbw * bw / sumBW
	}
	return c
}

func (w *network) gap(i, j int) float64 {
	if w.missing != nil {
		return w.missing[int(w.group[i])*w.ng+int(w.group[j])]
	}
	return w.worst
}

// avail is the mean measured available bandwidth of a pair.
func (w *network) avail(i, j int) (float64, bool) {
	if i == j {
		return 0, false
	}
	if i > j {
		i, j = j, i
	}
	if w.acc != nil {
		if a := &w.acc[w.triIndex(i, j)]; a.cnt > 0 {
			return float64(a.av), true
		}
		return 0, false
	}
	if k := w.find(i, j); k >= 0 {
		return w.vals[k].avail, true
	}
	return 0, false
}

// buildNetwork aggregates the links among the eligible nodes. snapIdx maps names
// to snapshot positions, elig maps snapshot positions to eligible indices (-1: not
// eligible), group is the switch group of each eligible node. eager (dense
// only) keeps the cost of every pair in a table, for policies that read
// costs O(V²) times (paper); otherwise cost computes a pair's from its
// figures when asked, sparing a V²/2 table (4 MB at 1,000 nodes) that
// netload reads only the pool's part of.
func buildNetwork(s *Snapshot, snapIdx map[string]int, elig []int, group []int32, ng int, wlt, wbw float64, globalPeak, dense, eager bool) *network {
	n := len(group)
	w := &network{n: n, group: group, ng: ng, nodeMean: make([]float64, n), nodePeak: make([]float64, n)}
	nodeCnt := make([]int32, n)
	// One record per pair, so a link touches one cache line, not four.
	var acc []denseAcc
	if dense {
		acc = getAcc(n * (n - 1) / 2)
	}
	ld := &linkReader{s: s, snapIdx: snapIdx, elig: elig, w: w, acc: acc, dense: dense,
		lastFrom: -1, lastTo: -1, capOut: make([]float64, n), capIn: make([]float64, n)}
	if !dense {
		ld.raw = make([]pairAgg, 0, len(s.Links))
	}
	ld.read(s.Links)
	if s.Model != nil {
		ld.readModel(s.Model)
	}
	raw, top, capOut, capIn := ld.raw, ld.top, ld.capOut, ld.capIn
	if !dense {
		w.rows, w.vals = mergeRows(raw, n)
	}
	pairAvail := w.pairAvail(s, elig, globalPeak, capOut, capIn)

	// Means per pair, the bandwidth term in place of the peak, the normalising sums.
	bwTerm := func(peak, avail float64) float64 {
		if globalPeak {
			return transferCost(avail, top)
		}
		return max(0, peak-avail)
	}
	var sumLT, sumBW float64
	if dense {
		sumLT, sumBW = w.densePairs(acc, pairAvail, globalPeak, top)
	} else {
		for k := range w.vals {
			a := &w.vals[k]
			c := float64(a.cnt)
			a.lt = a.lt / c
			a.avail = pairAvail.get(int(a.i), int(a.j), a.avail/c, a.availR/c)
			a.peak = bwTerm(a.peak/c, a.avail)
			sumLT += a.lt
			sumBW += a.peak
		}
		w.measured = len(w.vals)
	}
	if globalPeak && top > 0 {
		// T's terms: the RTT in its unit (rttUnit), the transfer cost
		// as it is (the type's comment).
		sumLT, sumBW = max(w.medianLT(acc), messageMs(top)), 1
	}
	norm := func(l, b float64) float64 { return pairCost(l, b, wlt, wbw, sumLT, sumBW) }

	useGroups := ng <= groupMax
	if useGroups {
		w.missing = make([]float64, ng*ng)
	}
	seen := make([]bool, len(w.missing))
	total := 0.0
	smp := newCostSample(w.measured)
	if dense {
		w.wlt, w.wbw, w.sumLT, w.sumBW = wlt, wbw, sumLT, sumBW
		total = w.denseCosts(acc, nodeCnt, seen, eager, smp)
	} else {
		// The slice, not the map, so sums add up in the same order every time.
		for k := range w.vals {
			a := &w.vals[k]
			a.cost = norm(a.lt, a.peak)
			i, j, c := int(a.i), int(a.j), a.cost
			total += c
			smp.add(c)
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
	}
	// The cost of a pair when every measured pair costs nothing: the
	// mean of a normalised pair under Eq. 2's sums; under T's own terms
	// (a ratio of RTTs, a transfer cost) the typical RTT and half the
	// fastest rate, w_lt*1 + w_bw*1.
	floorSum := wlt + wbw
	if globalPeak && top > 0 {
		floorSum *= float64(max(1, w.measured))
	}
	w.estimateGaps(total, nodeCnt, seen, floorSum)
	w.medianCost = smp.median(w.meanCost)
	return w
}

// medianSample bounds the costs the median of the measured pairs is taken
// over: every pair up to it (2,016 at 64 nodes), an evenly strided sample
// of them beyond (500,000 at 1,000 nodes), so the median costs a sort of
// at most this many, whatever the cluster.
const medianSample = 4096

// costSample keeps every stride-th value (a cost, or an RTT for
// medianLT) of the measured pairs, in the order buildNetwork visits them
// (a fixed order: the sample, and so the median, is a function of the
// snapshot).
type costSample struct {
	vals        []float64
	stride, due int
}

func newCostSample(measured int) *costSample {
	stride := max(1, (measured+medianSample-1)/medianSample)
	return &costSample{vals: make([]float64, 0, min(measured, medianSample)+1), stride: stride, due: 1}
}

func (s *costSample) add(c float64) {
	if s.due--; s.due == 0 {
		s.vals = append(s.vals, c)
		s.due = s.stride
	}
}

// median is the sample's median (the upper middle of an even count), or
// none when nothing was measured or the median pair costs nothing (most
// pairs as good as the best: a reference of 0 would drop N from T).
func (s *costSample) median(none float64) float64 {
	if len(s.vals) == 0 {
		return none
	}
	slices.Sort(s.vals)
	if m := s.vals[len(s.vals)/2]; m > 0 {
		return m
	}
	return none
}

// estimateGaps sets what an unmeasured pair costs (the type's comment)
// from the measured pairs' costs: their total, each node's sum and count
// (nodeMean, nodeCnt; the mean is taken here), the worst and the worst
// per switch pair (missing, seen); wsum/measured is what a pair costs
// when those are 0 (the type's comment). An eager dense table (tri) gets
// its unmeasured pairs' costs filled in.
func (w *network) estimateGaps(total float64, nodeCnt []int32, seen []bool, wsum float64) {
	floor := 1.0
	if w.measured > 0 {
		w.meanCost = total / float64(w.measured)
		floor = wsum / float64(w.measured)
	}
	if w.worst == 0 {
		w.worst = floor
	}
	for x := range w.missing {
		if !seen[x] {
			w.missing[x] = w.worst
		} else if w.missing[x] == 0 {
			w.missing[x] = floor
		}
	}
	if w.measured == 0 {
		w.meanCost = w.worst
	}
	for i, c := range nodeCnt {
		if c > 0 {
			w.nodeMean[i] /= float64(c)
		} else {
			w.nodeMean[i] = w.worst
		}
	}
	if w.tri == nil || w.measured == len(w.acc) {
		return
	}
	k := 0
	for i := 0; i < w.n; i++ {
		for j := i + 1; j < w.n; j++ {
			if w.acc[k].cnt == 0 {
				w.tri[k] = w.gap(i, j)
			}
			k++
		}
	}
}

// densePairs turns each measured pair's sums into its means, what it
// offers (dirAvail.get's steps, the row's own figures read once, offer
// inlined) and the bandwidth term in place of the peak, and returns the
// normalising sums. The arithmetic is buildNetwork's, operation for
// operation, in the same order (TestNetwork_EqualsReference).
func (w *network) densePairs(acc []denseAcc, d dirAvail, globalPeak bool, top float64) (sumLT, sumBW float64) {
	n := w.n
	freeOut, freeIn := d.freeOut, d.freeIn
	sw, ns, lastG := d.sw, d.ns, -1 // uplinks: nil sw when none carries traffic
	var upIn []float64
	if sw != nil {
		upIn = make([]float64, ns)
	}
	k := 0
	for i := 0; i < n; i++ {
		row := acc[k : k+n-i-1]
		k += len(row)
		var foI, fiI float64
		// What i's switch's uplinks have free towards each switch (upOut)
		// and from each (upIn, the table's column, copied so the row
		// reads it in order); nil when i has no switch.
		upOut := []float64(nil)
		if d.traffic {
			foI, fiI = freeOut[i], freeIn[i]
			if sw != nil {
				if gI := int(sw[i]); gI >= 0 {
					upOut = d.upFree[gI*ns : (gI+1)*ns]
					if gI != lastG {
						for b := range ns {
							upIn[b] = d.upFree[b*ns+gI]
						}
						lastG = gI
					}
				}
			}
		}
		for x := range row {
			a := &row[x]
			if a.cnt == 0 {
				continue
			}
			// Means of repeated measurements; one measurement (the usual
			// case, and every derived pair) is its own mean: x/1 == x.
			avS, avRS, pkS := a.av, a.avR, a.pk
			if a.cnt != 1 {
				f := float32(a.cnt)
				a.lt = a.lt / f
				avS, avRS, pkS = avS/f, avRS/f, pkS/f
			}
			ij, ji := float64(avS), float64(avRS)
			var av float64
			switch {
			case !d.directional:
				av = (ij + ji) / 2
			case d.traffic:
				j := i + 1 + x
				if upOut != nil {
					if gj := sw[j]; gj >= 0 {
						ij, ji = min(ij, upOut[gj]), min(ji, upIn[gj])
					}
				}
				av = offer(ij, ji, foI, fiI, freeOut[j], freeIn[j])
			default:
				av = min(ij, ji)
			}
			a.av = float32(av)
			if globalPeak {
				a.pk = float32(transferCost(av, top))
			} else {
				a.pk = float32(max(0, float64(pkS)-av))
			}
			sumLT += float64(a.lt)
			sumBW += float64(a.pk)
			w.measured++
		}
	}
	return sumLT, sumBW
}

// denseCosts computes the cost of every measured pair (into tri when
// eager) and folds it into
// the sums the gap estimates and the pool need: each node's (nodeMean,
// nodeCnt), the worst, the worst per switch pair (missing, seen). A row's
// own node sum is kept in a register and a row's switch-pair maxima are
// taken one way and mirrored after: the same additions in the same order,
// and maxima do not depend on order. Every cost goes to smp too. Returns
// the total cost.
func (w *network) denseCosts(acc []denseAcc, nodeCnt []int32, seen []bool, eager bool, smp *costSample) float64 {
	n, ng, group := w.n, w.ng, w.group
	wlt, wbw, sumLT, sumBW := w.wlt, w.wbw, w.sumLT, w.sumBW
	if eager {
		w.tri = make([]float64, len(acc))
	}
	useGroups := w.missing != nil
	total, worst := 0.0, w.worst
	k := 0
	for i := 0; i < n; i++ {
		row := acc[k : k+n-i-1]
		var tri []float64
		if eager {
			tri = w.tri[k : k+len(row)]
		}
		k += len(row)
		mi, ci := w.nodeMean[i], nodeCnt[i]
		var miss []float64
		var seenRow []bool
		if useGroups {
			gi := int(group[i])
			miss, seenRow = w.missing[gi*ng:(gi+1)*ng], seen[gi*ng:(gi+1)*ng]
		}
		for x := range row {
			a := &row[x]
			if a.cnt == 0 {
				continue
			}
			j := i + 1 + x
			c := pairCost(float64(a.lt), float64(a.pk), wlt, wbw, sumLT, sumBW)
			if eager {
				tri[x] = c
			}
			total += c
			smp.add(c)
			mi += c
			w.nodeMean[j] += c
			ci++
			nodeCnt[j]++
			worst = max(worst, c)
			if useGroups {
				gj := group[j]
				miss[gj] = max(miss[gj], c)
				seenRow[gj] = true
			}
		}
		w.nodeMean[i], nodeCnt[i] = mi, ci
	}
	w.worst = worst
	if useGroups {
		for a := range ng {
			for b := a + 1; b < ng; b++ {
				x, y := a*ng+b, b*ng+a
				m := max(w.missing[x], w.missing[y])
				w.missing[x], w.missing[y] = m, m
				s := seen[x] || seen[y]
				seen[x], seen[y] = s, s
			}
		}
	}
	w.acc = acc
	return total
}

// linkReader is buildNetwork's first pass: it folds the links, then the
// pairs, into the pair records and each node's capacity and fastest peak.
type linkReader struct {
	s                *Snapshot
	snapIdx          map[string]int
	elig             []int
	w                *network
	acc              []denseAcc // dense: one record per pair
	raw              []pairAgg  // sparse: one entry per link, merged into rows later
	dense            bool
	lastFrom, lastTo int
	top              float64 // the fastest peak measured
	// Each node's link capacity per direction: the fastest it was seen to
	// send (capOut) and to receive (capIn) at, in Mbit/s.
	capOut, capIn []float64
}

// resolve finds a link end's snapshot position. Links usually arrive
// grouped by From and ordered by To; guessing the next index saves most
// map lookups on 500,000-link snapshots.
func (ld *linkReader) resolve(name string, guess int) int {
	if guess >= 0 && guess < len(ld.s.Nodes) && ld.s.Nodes[guess].Name == name {
		return guess
	}
	if k, ok := ld.snapIdx[name]; ok {
		return k
	}
	return -1
}

func (ld *linkReader) read(links []Link) {
	w, elig, acc, capOut, capIn := ld.w, ld.elig, ld.acc, ld.capOut, ld.capIn
	lastFrom, lastTo, top := ld.lastFrom, ld.lastTo, ld.top
	for li := range links {
		l := &links[li]
		if !l.Measured {
			continue
		}
		f := ld.resolve(l.From, lastFrom)
		t := ld.resolve(l.To, lastTo+1)
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
		if ld.dense {
			a := &acc[w.triIndex(i, j)]
			a.lt += float32(rttMs(l.RTTus))
			a.pk += float32(max(pk, pkR))
			a.av += float32(av)
			a.avR += float32(avR)
			a.cnt++
			continue
		}
		ld.raw = append(ld.raw, pairAgg{lt: rttMs(l.RTTus), peak: max(pk, pkR), avail: av, availR: avR, cnt: 1, i: int32(i), j: int32(j)})
	}
	ld.lastFrom, ld.lastTo, ld.top = lastFrom, lastTo, top
}

// readModel is read for the links of Snapshot.Model: the model's rows
// (internal/pairmodel, whose Pair inlines) folded as addDerived folds a
// link, without a call per pair (500,000 at 1,000 nodes).
// TestNetwork_EqualsReferenceSynth and the leader's
// TestSnapshot_ModelPlacesAsLinks hold it to the same pairs as links.
func (ld *linkReader) readModel(m *PairModel) {
	if !ld.dense {
		m.Each(len(ld.s.Nodes), ld.addDerived)
		return
	}
	n := len(ld.s.Nodes)
	w, elig, acc, capOut, capIn, nodePeak := ld.w, ld.elig, ld.acc, ld.capOut, ld.capIn, ld.w.nodePeak
	top := ld.top
	rows := m.Rows(n)
	for f := range n {
		r := rows.Row(f)
		ef := elig[f]
		if !r.OK() || ef < 0 {
			continue
		}
		// Every derived pair puts the same rate into both ends'
		// capacities each way and fastest peaks: f's side is kept as
		// the row's maximum and folded in after the row (max does not
		// depend on order; the figures are checked, never NaN).
		rowPk, some := 0.0, false
		for t := f + 1; t < n; t++ {
			et := elig[t]
			if et < 0 {
				continue
			}
			rtt, av, pk, ok := r.Pair(t)
			if !ok {
				continue
			}
			rtt = rttMs(rtt)
			rowPk, some = max(rowPk, pk), true
			capOut[et], capIn[et], nodePeak[et] = max(capOut[et], pk), max(capIn[et], pk), max(nodePeak[et], pk)
			i, j := ef, et
			if i > j {
				i, j = j, i
			}
			a := &acc[w.triIndex(i, j)]
			a.lt += float32(rtt)
			a.pk += float32(pk)
			a.av += float32(av)
			a.avR += float32(av)
			a.cnt++
		}
		if some {
			capOut[ef], capIn[ef], nodePeak[ef] = max(capOut[ef], rowPk), max(capIn[ef], rowPk), max(nodePeak[ef], rowPk)
			top = max(top, rowPk)
		}
	}
	ld.top = top
}

// addDerived is read for a link of Snapshot.Model, by position: the
// same steps for a measured link with one figure for both directions.
func (ld *linkReader) addDerived(f, t int, rttUs, av, pk float64) {
	rtt := rttMs(rttUs)
	i, j := ld.elig[f], ld.elig[t]
	if i < 0 || j < 0 || i == j {
		return
	}
	w, capOut, capIn := ld.w, ld.capOut, ld.capIn
	capOut[i], capIn[j] = max(capOut[i], pk), max(capIn[j], pk)
	capOut[j], capIn[i] = max(capOut[j], pk), max(capIn[i], pk)
	if i > j {
		i, j = j, i
	}
	ld.top = max(ld.top, pk)
	w.nodePeak[i], w.nodePeak[j] = max(w.nodePeak[i], pk), max(w.nodePeak[j], pk)
	if ld.dense {
		a := &ld.acc[w.triIndex(i, j)]
		a.lt += float32(rtt)
		a.pk += float32(pk)
		a.av += float32(av)
		a.avR += float32(av)
		a.cnt++
		return
	}
	ld.raw = append(ld.raw, pairAgg{lt: rtt, peak: pk, avail: av, availR: av, cnt: 1, i: int32(i), j: int32(j)})
}

// mergeRows sorts the links by (i, j) with a counting sort on i and a small
// sort per row, and sums repeated pairs: a CSR table that costs O(L) to build
// and O(log degree) to query, where a map would cost a hash per link.
func mergeRows(raw []pairAgg, n int) ([]int32, []pairAgg) {
	rows := make([]int32, n+1)
	for _, a := range raw {
		rows[a.i+1]++
	}
	for i := range n {
		rows[i+1] += rows[i]
	}
	sorted := make([]pairAgg, len(raw))
	next := slices.Clone(rows[:n])
	for _, a := range raw {
		sorted[next[a.i]] = a
		next[a.i]++
	}
	out := sorted[:0]
	merged := make([]int32, n+1)
	for i := range n {
		row := sorted[rows[i]:rows[i+1]]
		slices.SortFunc(row, func(x, y pairAgg) int { return cmp.Compare(x.j, y.j) })
		for k := 0; k < len(row); k++ {
			if len(out) > int(merged[i]) && out[len(out)-1].j == row[k].j {
				last := &out[len(out)-1]
				last.lt += row[k].lt
				last.peak += row[k].peak
				last.avail += row[k].avail
				last.availR += row[k].availR
				last.cnt++
				continue
			}
			out = append(out, row[k])
		}
		merged[i+1] = int32(len(out))
	}
	return merged, out
}

// minShare is the least share of the fastest link transferCost counts a
// pair as offering. A pair with nothing free is not infinitely slow (the
// job's flows share the link with the traffic already on it), and one
// such pair must not outweigh every other pair of a group: at a tenth, a
// pair costs at most 9 (a top pair 0).
//
// Of the fastest link, not of the pair's own peak: with the pair's own,
// a 100 Mbit/s pair in a cluster of 10 Gbit/s links cost up to 999 (with
// the normalisation by sums of the time: the latency term outweighed the
// bandwidth of the fast pairs, TestNetload_CoordinateRTTsPlaceAsWell
// worst 1.107; placement-report: netload's groups 2,290 Mbit/s where
// this gave 2,404). The price: below a tenth of the fastest link, pairs
// are alike (1 Gbit/s and 100 Mbit/s next to 10 Gbit/s).
const minShare = 0.1

// transferCost is netload's bandwidth term for a pair offering avail
// Mbit/s, top the fastest peak measured: the time a byte takes on the
// pair, in units of its time on the fastest link, less that time, so a
// pair as fast as the fastest costs 0 (as its complement did) and none
// costs less (a pair may offer more than top: a peak measured below the
// link's rate). Below minShare*top it stays at minShare*top's cost.
func transferCost(avail, top float64) float64 {
	if !(top > 0) {
		return 0
	}
	d := max(avail, top*minShare)
	if d == 0 { // top*minShare underflowed: a denormal top
		return 1/minShare - 1
	}
	return max(0, top/d-1)
}

// refMessageBytes is the message size whose transfer time on the fastest
// link is the least unit of T's latency term: 64 KiB, about where MPI
// libraries go from eager sends to rendezvous.
const refMessageBytes = 64 << 10

// rttMs is an RTT of a link or of the model, µs, in the unit of T's
// latency arithmetic, ms: the unit its median and messageMs were fixed
// in, and with them the figures of every decision. The latency terms are
// ratios of RTTs, so the unit changes no decision in exact arithmetic; in
// floating point a change of unit inside them would move the last digits
// of T, so the links are read in the old unit.
func rttMs(us float64) float64 { return us / 1e3 }

// messageMs is the time, in ms, refMessageBytes take at top Mbit/s.
func messageMs(top float64) float64 { return refMessageBytes * 8 / 1e3 / top }

// medianLT is the median RTT of the measured pairs (of the same strided
// sample as medianCost beyond medianSample pairs), 1 when it is 0 (no RTT
// measured: the latency term is 0 anyway). acc is the dense table, nil
// for the sparse one (vals).
func (w *network) medianLT(acc []denseAcc) float64 {
	smp := newCostSample(w.measured)
	if acc != nil {
		for k := range acc {
			if acc[k].cnt > 0 {
				smp.add(float64(acc[k].lt))
			}
		}
	} else {
		for k := range w.vals {
			smp.add(w.vals[k].lt)
		}
	}
	return smp.median(1)
}
