package netmodel

import "github.com/shoal-hpc/shoal/probe"

// DerivedLink is the model's figure for one pair without a direct test.
type DerivedLink struct {
	A, B string
	Estimate
}

// Derive calls fn for every pair of names (A before B in names' order)
// that has no direct bandwidth test and that the model can estimate. A
// pair whose RTT was measured directly keeps that RTT. It runs in
// O(n² + measured pairs) with no map lookup per pair, as the leader's
// snapshot needs at a thousand nodes (~500,000 pairs).
func (m *Model) Derive(names []string, fn func(DerivedLink)) {
	t := m.Tables(names)
	n := len(names)
	skip := make([]bool, n)
	rtt := make([]float64, n)
	for i := range n {
		for _, d := range t.Direct[i] {
			skip[d.J], rtt[d.J] = d.BW, d.RTTms
		}
		for j := i + 1; j < n; j++ {
			e, ok := t.pair(i, j, skip[j], rtt[j])
			if ok {
				fn(DerivedLink{A: names[i], B: names[j], Estimate: e})
			}
		}
		for _, d := range t.Direct[i] {
			skip[d.J], rtt[d.J] = false, 0
		}
	}
}

// Tables are what Derive derives every pair from, by position in the
// names given to Tables, so that a reader can derive the pairs itself
// without a call per pair (placement does, from the copy the leader makes
// in placement.PairModel). Pair (i<j) is derived when it has no direct
// bandwidth test, Known[i] and Known[j], Sw[i], Sw[j] >= 0 and
// SwOK[Sw[i]*NS+Sw[j]]: available and peak the smaller of the two nodes'
// (Avail, Peak), across switches also at most the switch pair's
// (SwAvail, SwPeak); RTT the pair's direct one, else SwRTT.
type Tables struct {
	NS    int     // switches
	Sw    []int32 // per node: its switch, -1 when unknown
	Known []bool  // per node: the model has a capacity for it
	Guess []bool  // per node: that capacity was seen only across switches
	// Avail and Peak are each node's capacity, Mbit/s.
	Avail, Peak []float64
	// Per switch pair (a*NS+b, both orders): derivable, a guess (from
	// the uplinks), its capacity and RTT class.
	SwOK, SwGuess           []bool
	SwAvail, SwPeak, SwRTTs []float64
	// Direct[i] lists the pairs (i, J>i) with a direct figure.
	Direct [][]Direct
}

// Direct is a pair with a direct measurement: BW when it had a bandwidth
// test (then it is not derived), RTTms > 0 its direct RTT.
type Direct struct {
	J     int32
	BW    bool
	RTTms float64
}

// pair derives pair (i<j) given its direct figures (skip: a bandwidth
// test; rtt > 0: a direct RTT).
func (t *Tables) pair(i, j int, skip bool, rtt float64) (Estimate, bool) {
	if skip || !t.Known[i] || !t.Known[j] || t.Sw[i] < 0 || t.Sw[j] < 0 {
		return Estimate{}, false
	}
	k := int(t.Sw[i])*t.NS + int(t.Sw[j])
	if !t.SwOK[k] {
		return Estimate{}, false
	}
	e := Estimate{Known: true, Uncertain: t.Guess[i] || t.Guess[j] || t.SwGuess[k],
		AvailMbps: min(t.Avail[i], t.Avail[j]), PeakMbps: min(t.Peak[i], t.Peak[j]), RTTms: t.SwRTTs[k]}
	if t.Sw[i] != t.Sw[j] {
		e.AvailMbps, e.PeakMbps = min(e.AvailMbps, t.SwAvail[k]), min(e.PeakMbps, t.SwPeak[k])
	}
	if rtt > 0 {
		e.RTTms = rtt
	}
	return e, true
}

// Tables computes Derive's tables for names.
func (m *Model) Tables(names []string) *Tables {
	n := len(names)
	idx := make(map[string]int, n)
	for i, s := range names {
		idx[s] = i
	}
	// Per node: its switch index, the capacity the model uses for it,
	// whether that is a guess.
	swIdx := map[string]int{}
	var swNames []string
	t := &Tables{Sw: make([]int32, n), Known: make([]bool, n), Guess: make([]bool, n),
		Avail: make([]float64, n), Peak: make([]float64, n), Direct: make([][]Direct, n)}
	for i, s := range names {
		t.Sw[i] = -1
		name := m.asg[s].Name
		if name == "" {
			continue
		}
		k, ok := swIdx[name]
		if !ok {
			k = len(swNames)
			swIdx[name] = k
			swNames = append(swNames, name)
		}
		t.Sw[i] = int32(k)
		if c, ok := m.node[s]; ok {
			t.Avail[i], t.Peak[i], t.Known[i] = c.avail, c.peak, true
		} else if c, ok := m.loose[s]; ok {
			t.Avail[i], t.Peak[i], t.Known[i], t.Guess[i] = c.avail, c.peak, true, true
		}
	}
	// Switch pairs and RTT classes as dense tables.
	ns := len(swNames)
	t.NS = ns
	t.SwOK, t.SwGuess = make([]bool, ns*ns), make([]bool, ns*ns)
	t.SwAvail, t.SwPeak, t.SwRTTs = make([]float64, ns*ns), make([]float64, ns*ns), make([]float64, ns*ns)
	for a := range ns {
		for b := range ns {
			k := a*ns + b
			if a == b {
				t.SwOK[k] = true
				t.SwRTTs[k] = m.rttAll[0].mean()
				if c, ok := m.rtt[probe.NewPair(swNames[a], swNames[b])]; ok && c.n > 0 {
					t.SwRTTs[k] = c.mean()
				}
				continue
			}
			e := m.switchPair(swNames[a], swNames[b])
			t.SwAvail[k], t.SwPeak[k], t.SwOK[k], t.SwGuess[k], t.SwRTTs[k] = e.cap.avail, e.cap.peak, e.ok, e.guess, e.rtt
		}
	}
	// Each node's direct tests and RTTs, by index.
	for p, d := range m.pairs {
		i, okI := idx[p.A]
		j, okJ := idx[p.B]
		if !okI || !okJ {
			continue
		}
		if i > j {
			i, j = j, i
		}
		t.Direct[i] = append(t.Direct[i], Direct{J: int32(j), BW: d.at != 0, RTTms: d.rtt})
	}
	return t
}

type spEstimate struct {
	cap       capacity
	ok, guess bool
	rtt       float64
}

// switchPair is the capacity between two different switches: measured,
// or the slower uplink (a guess); and the RTT class.
func (m *Model) switchPair(a, b string) spEstimate {
	k := probe.NewPair(a, b)
	e := spEstimate{rtt: m.rttAll[1].mean()}
	if c, ok := m.rtt[k]; ok && c.n > 0 {
		e.rtt = c.mean()
	}
	if c, ok := m.swPair[k]; ok {
		e.cap, e.ok = c, true
		return e
	}
	ua, okA := m.uplink[a]
	ub, okB := m.uplink[b]
	if okA && okB {
		e.cap, e.ok, e.guess = capacity{avail: min(ua.avail, ub.avail), peak: min(ua.peak, ub.peak)}, true, true
	}
	return e
}
