package netmodel

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/shoal-hpc/shoal/probeplan"
)

// Model is the network as the measurements describe it: each node's link,
// each switch pair, and the direct measurements.
type Model struct {
	cfg    Config
	asg    Assignment
	pairs  map[probeplan.Pair]*pairData
	node   map[string]capacity // measured against own-switch peers
	loose  map[string]capacity // a node's best against anyone, for nodes with no own-switch figure
	swPair map[probeplan.Pair]capacity
	uplink map[string]capacity // a switch's best cross-switch figure
	// carried is, per ordered switch pair (from, to), the lower median of what
	// the tests that way carried (Measurement.CarriedAB/BA).
	carried map[[2]string]float64
	rtt     map[probeplan.Pair]rttClass
	rttAll  [2]rttClass // same switch, across switches
}

type capacity struct{ avail, peak float64 }

func (c *capacity) fold(avail, peak float64) {
	c.avail, c.peak = max(c.avail, avail), max(c.peak, peak)
}

type rttClass struct {
	sum float64
	n   int
}

func (r rttClass) mean() float64 {
	if r.n == 0 {
		return 0
	}
	return r.sum / float64(r.n)
}

// Build builds the model from a switch assignment (Infer's, or the
// switches raft recorded) and the measurements.
//
//   - A node's capacity is its best measured pair with a peer on its own
//     switch: on a switch the slower of two node links is the bottleneck,
//     so the best of a node's pairs is its own link (or a faster one).
//   - A switch pair's capacity is the median of its measured pairs across
//     those two switches (one flow through both uplinks): the median, not
//     the best, so one node on the wrong switch does not lift it.
//   - A switch's uplink is its best switch pair; an untested switch pair
//     is derived as the slower of the two uplinks, and is uncertain.
//
// Available figures follow the same rules with each pair's latest test.
func Build(asg Assignment, ms []Measurement, cfg Config) *Model {
	m := &Model{cfg: cfg.orDefault(), asg: asg, pairs: merge(ms),
		node: map[string]capacity{}, loose: map[string]capacity{}, swPair: map[probeplan.Pair]capacity{},
		uplink: map[string]capacity{}, rtt: map[probeplan.Pair]rttClass{}, carried: carriedBySwitches(asg, ms)}
	cross := map[probeplan.Pair][]capacity{}
	keys := slices.SortedFunc(maps.Keys(m.pairs), func(x, y probeplan.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	for _, p := range keys { // in order: float sums do not depend on map order
		d := m.pairs[p]
		sa, sb := asg[p.A].Name, asg[p.B].Name
		if d.rttN > 0 && sa != "" && sb != "" {
			k := probeplan.NewPair(sa, sb)
			c := m.rtt[k]
			c.sum, c.n = c.sum+d.rtt, c.n+1
			m.rtt[k] = c
			cls := &m.rttAll[1]
			if sa == sb {
				cls = &m.rttAll[0]
			}
			cls.sum, cls.n = cls.sum+d.rtt, cls.n+1
		}
		if d.at == 0 {
			continue
		}
		for _, n := range []string{p.A, p.B} {
			c := m.loose[n]
			c.fold(d.avail, d.peak)
			m.loose[n] = c
		}
		switch {
		case sa == "" || sb == "":
		case sa == sb:
			for _, n := range []string{p.A, p.B} {
				c := m.node[n]
				c.fold(d.avail, d.peak)
				m.node[n] = c
			}
		default:
			k := probeplan.NewPair(sa, sb)
			cross[k] = append(cross[k], capacity{avail: d.avail, peak: d.peak})
		}
	}
	for k, cs := range cross {
		m.swPair[k] = median(cs)
	}
	for k, c := range m.swPair {
		for _, s := range []string{k.A, k.B} {
			u := m.uplink[s]
			u.fold(c.avail, c.peak)
			m.uplink[s] = u
		}
	}
	return m
}

// carriedBySwitches takes, per ordered pair of different switches, the
// lower median of what the tests from one to the other carried. Both ends'
// rows may hold the same test: it then counts twice, for both. One
// sorted slice of integer keys rather than a slice per switch pair: ~4,000
// ordered switch pairs at 1,000 nodes would be as many allocations per
// snapshot, and sorting by name pairs cost 2 ms.
func carriedBySwitches(asg Assignment, ms []Measurement) map[[2]string]float64 {
	type stamp struct {
		k int // from*len(names) + to, by switch index: integers sort far faster than name pairs
		v float64
	}
	idx := map[string]int{}
	var names []string
	index := func(sw string) int {
		k, ok := idx[sw]
		if !ok {
			k = len(names)
			idx[sw] = k
			names = append(names, sw)
		}
		return k
	}
	var raw []stamp // keys of (from, to) indices, before names are all known
	for _, m := range ms {
		sa, sb := asg[m.A].Name, asg[m.B].Name
		if sa == "" || sb == "" || sa == sb || !(positiveRate(m.CarriedAB) || positiveRate(m.CarriedBA)) {
			continue
		}
		a, b := index(sa), index(sb)
		if positiveRate(m.CarriedAB) {
			raw = append(raw, stamp{a<<32 | b, m.CarriedAB})
		}
		if positiveRate(m.CarriedBA) {
			raw = append(raw, stamp{b<<32 | a, m.CarriedBA})
		}
	}
	if len(raw) == 0 {
		return nil
	}
	slices.SortFunc(raw, func(x, y stamp) int { return cmp.Or(cmp.Compare(x.k, y.k), cmp.Compare(x.v, y.v)) })
	out := map[[2]string]float64{}
	for lo := 0; lo < len(raw); {
		hi := lo + 1
		for hi < len(raw) && raw[hi].k == raw[lo].k {
			hi++
		}
		// The lower median: each test is in both ends' rows, and with the
		// one test per switch pair of a topology cycle the upper median
		// would be the larger of its two readings.
		out[[2]string{names[raw[lo].k>>32], names[raw[lo].k&(1<<32-1)]}] = raw[lo+(hi-lo-1)/2].v
		lo = hi
	}
	return out
}

// positiveRate is a rate worth keeping: finite and positive.
func positiveRate(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// Carried is the lower median of what the tests from switch a to switch b
// carried, rate plus crossing traffic (Measurement.CarriedAB); false when
// no such test was stamped.
func (m *Model) Carried(a, b string) (float64, bool) {
	v, ok := m.carried[[2]string{a, b}]
	return v, ok
}

// Estimate is the model's figure for one pair.
type Estimate struct {
	// Known is false when the model cannot say: a node's switch is
	// unknown, or nothing was measured on one of its links.
	Known bool
	// AvailMbps and PeakMbps as a bandwidth test would read them.
	AvailMbps, PeakMbps float64
	// RTTus is the pair's measured RTT (µs), else the mean measured RTT of
	// pairs of the same two switches (else of the same kind, same switch
	// or across), 0 when none.
	RTTus float64
	// Uncertain: the figure rests on a guess (a node's capacity seen only
	// across switches, or an untested switch pair derived from uplinks),
	// or a direct measurement of the pair disagrees with it.
	Uncertain bool
}

// NodeCapacity is a node's link as measured against its own switch's
// peers; ok is false when it has no such measurement.
func (m *Model) NodeCapacity(n string) (avail, peak float64, ok bool) {
	c, ok := m.node[n]
	return c.avail, c.peak, ok
}

// Pair derives the bandwidth between a and b: the slower of the two node
// links, and across switches also the switch pair's capacity. It does not
// look at a's and b's own direct measurement (see Disagreements).
func (m *Model) Pair(a, b string) Estimate {
	sa, sb := m.asg[a].Name, m.asg[b].Name
	if sa == "" || sb == "" || a == b {
		return Estimate{}
	}
	e := Estimate{Known: true}
	ca, okA := m.node[a]
	cb, okB := m.node[b]
	if !okA {
		ca, okA = m.loose[a]
		e.Uncertain = true
	}
	if !okB {
		cb, okB = m.loose[b]
		e.Uncertain = true
	}
	if !okA || !okB {
		return Estimate{}
	}
	e.AvailMbps, e.PeakMbps = min(ca.avail, cb.avail), min(ca.peak, cb.peak)
	cls := m.rttAll[0]
	if sa != sb {
		cls = m.rttAll[1]
		k := probeplan.NewPair(sa, sb)
		sp, ok := m.swPair[k]
		if !ok {
			ua, okA := m.uplink[sa]
			ub, okB := m.uplink[sb]
			if !okA || !okB {
				return Estimate{}
			}
			sp = capacity{avail: min(ua.avail, ub.avail), peak: min(ua.peak, ub.peak)}
			e.Uncertain = true
		}
		e.AvailMbps, e.PeakMbps = min(e.AvailMbps, sp.avail), min(e.PeakMbps, sp.peak)
	}
	if c, ok := m.rtt[probeplan.NewPair(sa, sb)]; ok && c.n > 0 {
		e.RTTus = c.mean()
	} else {
		e.RTTus = cls.mean()
	}
	if d := m.pairs[probeplan.NewPair(a, b)]; d != nil {
		if d.rttN > 0 {
			e.RTTus = d.rtt // measured directly: better than the class
		}
		if d.at != 0 && m.disagrees(d.peak, e.PeakMbps) {
			e.Uncertain = true
		}
	}
	return e
}

func (m *Model) disagrees(measured, derived float64) bool {
	return derived > 0 && (measured < (1-m.cfg.Disagree)*derived || measured > (1+m.cfg.Disagree)*derived)
}

// Disagreements lists the directly measured pairs whose peak the model
// does not explain (below 1-Disagree or above 1+Disagree times the
// derived peak), oldest test first: the pairs that keep direct tests. A
// same-switch pair far below its nodes' links (a bad cable, a port
// negotiated down) or a cross-switch pair far above its switch pair (a
// node on the wrong switch) lands here.
func (m *Model) Disagreements() []probeplan.Pair {
	var out []probeplan.Pair
	for _, p := range sortedPairs(m.pairs) {
		e := m.Pair(p.A, p.B)
		if e.Known && m.disagrees(m.pairs[p].peak, e.PeakMbps) {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(x, y probeplan.Pair) int { return cmp.Compare(m.pairs[x].at, m.pairs[y].at) })
	return out
}

// Measured reports whether a and b have a direct bandwidth test.
func (m *Model) Measured(a, b string) bool {
	d := m.pairs[probeplan.NewPair(a, b)]
	return d != nil && d.at != 0
}

// Switch returns a node's switch in the model's assignment.
func (m *Model) Switch(n string) Switch { return m.asg[n] }

// median takes the median of avail and of peak separately (the upper
// middle of an even count).
func median(cs []capacity) capacity {
	av := make([]float64, len(cs))
	pk := make([]float64, len(cs))
	for i, c := range cs {
		av[i], pk[i] = c.avail, c.peak
	}
	slices.Sort(av)
	slices.Sort(pk)
	return capacity{avail: av[len(av)/2], peak: pk[len(pk)/2]}
}
