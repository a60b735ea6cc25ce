package netmodel

import (
	"github.com/shoal-hpc/shoal/internal/pairmodel"
	"github.com/shoal-hpc/shoal/probeplan"
)

// Tables are what the model derives every pair of nodes from, by
// position in the names given to Tables: each node's switch and capacity,
// each switch pair's capacity and RTT class, the pairs measured directly.
// internal/pairmodel derives the pairs from them (Rows, Each), the one
// implementation of the rule, which Pair states per pair; the leader
// hands them to placement as they are (placement.PairModel is this type),
// and placement derives each pair as it reads it: no name or call per
// pair for the ~500,000 pairs of 1,000 nodes.
type Tables = pairmodel.Tables

// Tables computes the tables for names. A node's capacity is the one Pair
// uses: against its own switch's peers, else its best against anyone; a
// switch pair's is measured, else the slower uplink.
func (m *Model) Tables(names []string) *Tables {
	t, _ := m.tables(names, false)
	return t
}

// Guesses says which of a Tables' figures are guesses rather than
// measurements, by the same positions: per node, a capacity seen only
// across switches; per switch pair (a*NS+b), a capacity taken from the
// nodes' uplinks instead of a test between the two switches. Placement
// does not read them (a guess is still the best figure there is); the
// leader's cold-start gate does: a model is complete only when nothing it
// would place on is a guess.
type Guesses struct {
	Node, Switch []bool
}

// TablesAndGuesses is Tables with its Guesses.
func (m *Model) TablesAndGuesses(names []string) (*Tables, Guesses) {
	return m.tables(names, true)
}

func (m *Model) tables(names []string, withGuesses bool) (*Tables, Guesses) {
	var g Guesses
	n := len(names)
	idx := make(map[string]int, n)
	for i, s := range names {
		idx[s] = i
	}
	// Per node: its switch index and the capacity the model uses for it.
	swIdx := map[string]int{}
	var swNames []string
	t := &Tables{Sw: make([]int32, n), Known: make([]bool, n),
		Avail: make([]float64, n), Peak: make([]float64, n), Direct: make([][]pairmodel.Direct, n)}
	if withGuesses {
		g.Node = make([]bool, n)
	}
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
			t.Avail[i], t.Peak[i], t.Known[i] = c.avail, c.peak, true
			if withGuesses {
				g.Node[i] = true
			}
		}
	}
	// Switch pairs and RTT classes as dense tables.
	ns := len(swNames)
	t.NS = ns
	t.SwOK = make([]bool, ns*ns)
	t.SwAvail, t.SwPeak, t.SwRTTus = make([]float64, ns*ns), make([]float64, ns*ns), make([]float64, ns*ns)
	if withGuesses {
		g.Switch = make([]bool, ns*ns)
	}
	for a := range ns {
		for b := range ns {
			k := a*ns + b
			if a == b {
				t.SwOK[k] = true
				t.SwRTTus[k] = m.rttAll[0].mean()
				if c, ok := m.rtt[probeplan.NewPair(swNames[a], swNames[b])]; ok && c.n > 0 {
					t.SwRTTus[k] = c.mean()
				}
				continue
			}
			e := m.switchPair(swNames[a], swNames[b])
			t.SwAvail[k], t.SwPeak[k], t.SwOK[k], t.SwRTTus[k] = e.cap.avail, e.cap.peak, e.ok, e.rtt
			if c, ok := m.carried[[2]string{swNames[a], swNames[b]}]; ok {
				if t.SwCap == nil {
					t.SwCap = make([]float64, ns*ns)
				}
				t.SwCap[k] = c
			}
			if withGuesses {
				g.Switch[k] = e.guess
			}
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
		t.Direct[i] = append(t.Direct[i], pairmodel.Direct{J: int32(j), BW: d.at != 0, RTTus: d.rtt})
	}
	return t, g
}

type spEstimate struct {
	cap   capacity
	ok    bool
	guess bool // from the uplinks, not a test between the two switches
	rtt   float64
}

// switchPair is the capacity between two different switches: measured,
// or the slower uplink; and the RTT class.
func (m *Model) switchPair(a, b string) spEstimate {
	k := probeplan.NewPair(a, b)
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
