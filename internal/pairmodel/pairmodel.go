package pairmodel

// Tables derive the links by node position, in order: for i < j, pair
// (i, j) is derived when it has no direct bandwidth test (Direct),
// Known[i] and Known[j], Sw[i], Sw[j] >= 0 and SwOK[Sw[i]*NS+Sw[j]]. Its
// available and peak rates are the smaller of the two nodes' (Avail,
// Peak) and, across switches, at most the switch pair's (SwAvail,
// SwPeak); its RTT is the pair's direct one, else SwRTTus. Positions are
// into the node list the tables were built for, so whoever drops or
// reorders nodes must rebuild them.
type Tables struct {
	NS    int     // switches
	Sw    []int32 // per node: its switch, -1 when unknown
	Known []bool  // per node: the model has a capacity for it
	// Avail and Peak are each node's capacity, Mbit/s.
	Avail, Peak []float64
	// Per switch pair, a*NS+b, both orders: derivable, its capacity
	// (Mbit/s) and RTT class (µs).
	SwOK                     []bool
	SwAvail, SwPeak, SwRTTus []float64
	// SwCap is, per ordered switch pair a*NS+b, what the uplinks from a
	// to b carried during the bandwidth tests that way: each test's rate
	// plus the traffic that crossed from a to b meanwhile (the lower median
	// over the tests), Mbit/s; 0 when no test that way was stamped with
	// its traffic. nil when none was. Not used to derive pairs: it is the
	// capacity placement subtracts the traffic crossing now from.
	SwCap []float64
	// Direct[i] lists the pairs (i, J>i) with a direct measurement.
	Direct [][]Direct
}

// Direct is pair (i, J) measured directly: BW when by a bandwidth test
// (then not derived), RTTus > 0 its direct RTT (µs).
type Direct struct {
	J     int32
	BW    bool
	RTTus float64
}

// Rows walks the pairs of n nodes row by row (Row), keeping each row's
// direct pairs in an array indexed by the other end: O(n² + direct
// pairs) with no lookup per pair, as ~500,000 pairs at 1,000 nodes need.
// It holds the tables as records, a node's or a switch pair's figures
// side by side, so that Pair reads one record where the tables are
// several slices (and so inlines).
type Rows struct {
	t    *Tables
	node []nodeRec // by node
	sp   []spRec   // the switch pairs (spSw, b) by b; sp[NS] is never ok
	spSw int32     // whose switch pairs sp holds, -1 none yet
	dir  []dirRec  // by j: the current row's pair (i, j)
	cur  int       // the row whose directs are set, -1 none
}

type nodeRec struct {
	sw          int32 // the node's switch when Known and >= 0, else NS (a column of !ok pairs)
	avail, peak float64
}

type spRec struct {
	ok               bool
	avail, peak, rtt float64
}

type dirRec struct {
	bw  bool    // a bandwidth test: not derived
	rtt float64 // the direct RTT, 0 when none
}

// Rows prepares a walk over the pairs of the n nodes the tables hold;
// the tables must fit n nodes (placement checks a Snapshot's: checkModel).
func (t *Tables) Rows(n int) *Rows {
	w := &Rows{t: t, node: make([]nodeRec, n), sp: make([]spRec, t.NS+1), spSw: -1, dir: make([]dirRec, n), cur: -1}
	for i := range n {
		w.node[i] = nodeRec{sw: int32(t.NS), avail: t.Avail[i], peak: t.Peak[i]}
		if t.Known[i] && t.Sw[i] >= 0 {
			w.node[i].sw = t.Sw[i]
		}
	}
	return w
}

// Row returns what derives the pairs (i, j>i). It is valid until the next
// call of Row, which may come for any i, usually the next.
func (w *Rows) Row(i int) Row {
	t := w.t
	if w.cur >= 0 {
		for _, d := range t.Direct[w.cur] {
			w.dir[d.J] = dirRec{}
		}
	}
	for _, d := range t.Direct[i] {
		w.dir[d.J] = dirRec{bw: d.BW, rtt: d.RTTus}
	}
	w.cur = i
	ni := w.node[i]
	r := Row{si: ni.sw, availI: ni.avail, peakI: ni.peak, node: w.node, dir: w.dir}
	if ni.sw == int32(t.NS) {
		return r // no switch or no capacity: not OK
	}
	if ni.sw != w.spSw { // rows of one switch usually follow each other
		row := int(ni.sw) * t.NS
		for b := range t.NS {
			k := row + b
			w.sp[b] = spRec{ok: t.SwOK[k], avail: t.SwAvail[k], peak: t.SwPeak[k], rtt: t.SwRTTus[k]}
		}
		w.spSw = ni.sw
	}
	r.sp = w.sp
	return r
}

// Row derives the pairs of one node i with the nodes after it, i's own
// figures read once.
type Row struct {
	si            int32 // i's switch, NS when no pair of the row is derived
	availI, peakI float64
	node          []nodeRec
	sp            []spRec // the switch pairs (si, b), by b
	dir           []dirRec
}

// OK is false when no pair of the row is derived (i has no switch or no
// capacity): the caller must skip the row.
func (r *Row) OK() bool { return r.sp != nil }

// Pair derives pair (i, j), j > i, of a row that is OK: ok false when it
// is not derived. Small enough to inline, so a row's loop makes no call
// per pair (at cost 80, the inliner's budget: keep it so).
func (r *Row) Pair(j int) (rtt, avail, peak float64, ok bool) {
	nj, d := &r.node[j], &r.dir[j]
	sp := &r.sp[nj.sw]
	if ok = sp.ok && !d.bw; ok {
		avail, peak, rtt = min(r.availI, nj.avail), min(r.peakI, nj.peak), sp.rtt
		if r.si != nj.sw {
			avail, peak = min(avail, sp.avail), min(peak, sp.peak)
		}
		if d.rtt > 0 {
			rtt = d.rtt
		}
	}
	return
}

// Each calls fn for every pair the tables derive among n nodes, in order
// (i, then j): for readers that take a call per pair.
func (t *Tables) Each(n int, fn func(i, j int, rtt, avail, peak float64)) {
	rows := t.Rows(n)
	for i := range n {
		r := rows.Row(i)
		if !r.OK() {
			continue
		}
		for j := i + 1; j < n; j++ {
			if rtt, avail, peak, ok := r.Pair(j); ok {
				fn(i, j, rtt, avail, peak)
			}
		}
	}
}
