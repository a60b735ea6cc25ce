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
	n := len(names)
	idx := make(map[string]int, n)
	for i, s := range names {
		idx[s] = i
	}
	// Per node: its switch index, the capacity the model uses for it,
	// whether that is a guess.
	swIdx := map[string]int{}
	var swNames []string
	sw := make([]int, n)
	capv := make([]capacity, n)
	known := make([]bool, n)
	guess := make([]bool, n)
	for i, s := range names {
		sw[i] = -1
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
		sw[i] = k
		if c, ok := m.node[s]; ok {
			capv[i], known[i] = c, true
		} else if c, ok := m.loose[s]; ok {
			capv[i], known[i], guess[i] = c, true, true
		}
	}
	// Switch pairs and RTT classes as dense tables.
	ns := len(swNames)
	spCap := make([]capacity, ns*ns)
	spOK := make([]bool, ns*ns)
	spGuess := make([]bool, ns*ns)
	spRTT := make([]float64, ns*ns)
	for a := range ns {
		for b := range ns {
			k := a*ns + b
			if a == b {
				spOK[k] = true
				spRTT[k] = m.rttAll[0].mean()
				if c, ok := m.rtt[probe.NewPair(swNames[a], swNames[b])]; ok && c.n > 0 {
					spRTT[k] = c.mean()
				}
				continue
			}
			e := m.switchPair(swNames[a], swNames[b])
			spCap[k], spOK[k], spGuess[k], spRTT[k] = e.cap, e.ok, e.guess, e.rtt
		}
	}
	// Each node's direct tests and RTTs, by index.
	type direct struct {
		j   int
		bw  bool
		rtt float64
	}
	peers := make([][]direct, n)
	for p, d := range m.pairs {
		i, okI := idx[p.A]
		j, okJ := idx[p.B]
		if !okI || !okJ {
			continue
		}
		if i > j {
			i, j = j, i
		}
		peers[i] = append(peers[i], direct{j: j, bw: d.at != 0, rtt: d.rtt})
	}
	skip := make([]bool, n)
	rtt := make([]float64, n)
	for i := range n {
		for _, d := range peers[i] {
			skip[d.j], rtt[d.j] = d.bw, d.rtt
		}
		for j := i + 1; j < n; j++ {
			if skip[j] || !known[i] || !known[j] || sw[i] < 0 || sw[j] < 0 {
				continue
			}
			k := sw[i]*ns + sw[j]
			if !spOK[k] {
				continue
			}
			e := Estimate{Known: true, Uncertain: guess[i] || guess[j] || spGuess[k],
				AvailMbps: min(capv[i].avail, capv[j].avail), PeakMbps: min(capv[i].peak, capv[j].peak), RTTms: spRTT[k]}
			if sw[i] != sw[j] {
				e.AvailMbps, e.PeakMbps = min(e.AvailMbps, spCap[k].avail), min(e.PeakMbps, spCap[k].peak)
			}
			if rtt[j] > 0 {
				e.RTTms = rtt[j]
			}
			fn(DerivedLink{A: names[i], B: names[j], Estimate: e})
		}
		for _, d := range peers[i] {
			skip[d.j], rtt[d.j] = false, 0
		}
	}
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
