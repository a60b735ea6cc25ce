package placement

import (
	"cmp"
	"slices"
)

// Above denseMaxNodes the pair table is a map keyed by pair, so a 10,000-node
// snapshot with a sparse link table never allocates V^2 entries.
const (
	denseMaxNodes = 1024
	groupMax      = 256 // beyond this many switches unmeasured pairs use the global estimate
)

// network holds NL_(u,v) (Eq. 2) for the eligible nodes: the mean latency and the
// bandwidth complement (peak - available) of each measured pair, repeated
// measurements averaged per direction, available being what the pair offers
// (direction.go: the worse direction for netload, the mean of the two for
// paper), each divided by its sum over all measured pairs, weighted by w_lt
// and w_bw.
//
// The paper takes the complement against the pair's own peak. On a cluster with
// mixed port rates that ranks a half-used 10 Gbit/s pair (5,000 Mbit/s free) as
// worse than an idle 100 Mbit/s one, so T and netload take it against the
// fastest peak measured in the cluster (globalPeak): the complement is then
// "how far below the best link", which orders pairs by what they offer.
//
// An unmeasured pair is never a perfect link: it costs as much as the worst
// measured pair between the same two switches, or, when no such pair is measured,
// the worst measured pair anywhere; when that is zero (or nothing is measured)
// it costs (w_lt+w_bw)/max(1, measured pairs), the mean of a normalised pair.
type network struct {
	n        int
	tri      []float64 // dense: cost of pair (i<j), gaps already filled
	triAvail []float64 // dense: mean available Mbps, -1 = unmeasured
	rows     []int32   // sparse: vals[rows[i]:rows[i+1]] are the pairs (i, j>i), sorted by j
	vals     []pairAgg // sparse: measured pairs
	group    []int32
	ng       int
	missing  []float64 // ng*ng estimate for unmeasured pairs, nil when ng > groupMax
	worst    float64   // global estimate for unmeasured pairs
	measured int
	meanCost float64   // mean cost over measured pairs
	nodeMean []float64 // mean cost of each node's measured pairs (gap estimate when none)
	nodePeak []float64 // fastest peak Mbps measured on any of the node's pairs (0: none)
}

// denseAcc sums a pair's measurements, the available rate of each
// direction apart (av: from the lower index to the higher) and the peak
// of the faster; float32 keeps it to 20 bytes, and a measurement has
// fewer significant digits than that anyway.
type denseAcc struct {
	lt, pk, av, avR float32
	cnt             int32
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
	if l.FwdMbps > 0 {
		av = float64(l.FwdMbps)
	}
	if l.RevMbps > 0 {
		avR = float64(l.RevMbps)
	}
	if l.FwdPeakMbps > 0 {
		pk = float64(l.FwdPeakMbps)
	}
	if l.RevPeakMbps > 0 {
		pkR = float64(l.RevPeakMbps)
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
	if k := w.find(i, j); k >= 0 {
		return w.vals[k].cost
	}
	return w.gap(i, j)
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
	if w.tri != nil {
		if a := w.triAvail[w.triIndex(i, j)]; a >= 0 {
			return a, true
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
// eligible), group is the switch group of each eligible node.
func buildNetwork(s *Snapshot, snapIdx map[string]int, elig []int, group []int32, ng int, wlt, wbw float64, globalPeak, dense bool) *network {
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
			a.lt += float32(l.RTTms)
			a.pk += float32(max(pk, pkR))
			a.av += float32(av)
			a.avR += float32(avR)
			a.cnt++
			continue
		}
		raw = append(raw, pairAgg{lt: l.RTTms, peak: max(pk, pkR), avail: av, availR: avR, cnt: 1, i: int32(i), j: int32(j)})
	}
	if !dense {
		w.rows, w.vals = mergeRows(raw, n)
	}
	pairAvail := w.pairAvail(s, elig, globalPeak, capOut, capIn)

	// Means per pair, the complement in place of the peak, the normalising sums.
	complement := func(peak, avail float64) float64 {
		if globalPeak {
			peak = top
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
	note := func(i, j int, c float64) {
		total += c
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
		w.tri, w.triAvail = make([]float64, len(acc)), make([]float64, len(acc))
		k := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if a := &acc[k]; a.cnt > 0 {
					w.tri[k] = norm(float64(a.lt), float64(a.pk))
					w.triAvail[k] = float64(a.av)
					note(i, j, w.tri[k])
				} else {
					w.triAvail[k] = -1
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
	floor := 1.0
	if w.measured > 0 {
		w.meanCost = total / float64(w.measured)
		floor = (wlt + wbw) / float64(w.measured)
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
	if dense {
		k := 0
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if acc[k].cnt == 0 {
					w.tri[k] = w.gap(i, j)
				}
				k++
			}
		}
	}
	return w
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
