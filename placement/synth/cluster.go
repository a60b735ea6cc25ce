package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

// Config shapes a generated cluster. Zero fields take the documented defaults.
type Config struct {
	Nodes    int   // node count; default 16
	Switches int   // switch count; default 4 (fewer when there are fewer nodes)
	Seed     int64 // everything random derives from it
	// PeerLinks, when > 0, measures each node against only this many random
	// peers plus its two switch neighbours, as a 10,000-node cluster would;
	// 0 measures every pair in both directions.
	PeerLinks int
	DeadFrac  float64 // fraction of nodes marked dead; default 0
	GPUFrac   float64 // fraction of nodes with GPUs; default 0
	// Unmeasured drops this fraction of the pairs from the link table.
	Unmeasured float64
	// Derived shapes the links as leader.Snapshot hands them over under the
	// network model's O(n + s²) probes: direct tests only between each node
	// and the next on its switch and between the first nodes of each pair of
	// switches, both ends' rows reporting them with both directions apart and
	// the RTT a Vivaldi estimate (RTTEstimated); every other pair one derived
	// link (Measured and Derived, undirected, A before B in node order, as
	// internal/pairmodel derives them): the slower of the two node links and,
	// across switches, the switch pair's; and each node's latest traffic
	// sample per direction (NetRxBytesPerSec, NetTxBytesPerSec). It ignores
	// PeerLinks and Unmeasured, and leaves the nodes as without it.
	Derived bool
	// Model, with Derived, gives the derived pairs as Snapshot.Model (the
	// network model's tables, as the leader hands them over) instead of
	// as Links: the same links, which placement derives as it reads.
	Model bool
}

// switch port rates in Mbps: uneven on purpose (seed 002's lab mixes them).
var portMbps = []float64{1000, 10000, 1000, 100}

const gib = 1 << 30

// Cluster generates a snapshot.
func Cluster(c Config) placement.Snapshot {
	if c.Nodes <= 0 {
		c.Nodes = 16
	}
	if c.Switches <= 0 {
		c.Switches = 4
	}
	c.Switches = min(c.Switches, c.Nodes)
	r := rand.New(rand.NewPCG(uint64(c.Seed), 0xc1a5))
	width := len(fmt.Sprint(c.Nodes - 1))
	sw := make([]int, c.Nodes)
	busy := make([]float64, c.Switches) // background utilisation of each switch
	for s := range busy {
		busy[s] = 0.7 * r.Float64()
	}
	noise := make([]float64, c.Nodes) // per-node traffic eating its links
	snap := placement.Snapshot{Nodes: make([]placement.Node, c.Nodes)}
	for i := range snap.Nodes {
		sw[i] = i * c.Switches / c.Nodes
		noise[i] = 0.6 + 0.4*r.Float64()
		cores := []int{4, 6}[r.IntN(2)]
		threads := 2 * cores
		var load float64
		switch x := r.Float64(); {
		case x < 0.6:
			load = 0.3 * r.Float64() * float64(threads)
		case x < 0.9:
			load = (0.3 + 0.5*r.Float64()) * float64(threads)
		default:
			load = (0.8 + 0.5*r.Float64()) * float64(threads)
		}
		util := min(100, 100*load/float64(threads)*(0.8+0.4*r.Float64()))
		mem := uint64([]int{16, 32}[r.IntN(2)]) * gib
		avail := float64(mem) * (0.3 + 0.6*r.Float64())
		flow := 1e8 * r.Float64() * r.Float64()
		jit := func(v float64) nodestate.Means {
			return nodestate.Means{Now: v * (0.9 + 0.2*r.Float64()), M1: v, M5: v * (0.85 + 0.3*r.Float64()), M15: v * (0.8 + 0.4*r.Float64())}
		}
		n := placement.Node{
			Name:     fmt.Sprintf("node%0*d", width, i),
			Alive:    r.Float64() >= c.DeadFrac,
			Switch:   fmt.Sprintf("sw%d", sw[i]),
			Cores:    cores,
			Threads:  threads,
			MHz:      []float64{2800, 4600}[r.IntN(2)],
			MemTotal: mem,
			Load:     jit(load),
			CPUUtil:  jit(util),
			MemAvail: jit(avail),
			NetFlow:  jit(flow),
			Users:    r.IntN(4),
		}
		n.Load.M1 = load
		if r.Float64() < c.GPUFrac {
			n.PEs = []nodestate.PE{{Kind: "gpu", Model: "T4", Count: 1 + r.IntN(4)}}
		}
		snap.Nodes[i] = n
	}
	link := func(i, j int) placement.Link {
		si, sj := sw[i], sw[j]
		var peak, avail, rtt float64
		if si == sj {
			peak = portMbps[si%len(portMbps)]
			avail = peak * (1 - busy[si]) * min(noise[i], noise[j])
			rtt = 1e3 * (0.05 + 0.15*r.Float64()) // µs
		} else {
			// through the uplinks: the slower port, shared with the other traffic
			peak = min(portMbps[si%len(portMbps)], portMbps[sj%len(portMbps)])
			avail = peak * (1 - max(busy[si], busy[sj])) * (0.3 + 0.4*r.Float64()) * min(noise[i], noise[j])
			rtt = 1e3 * (0.3 + 1.2*r.Float64())
		}
		return placement.Link{From: snap.Nodes[i].Name, To: snap.Nodes[j].Name,
			RTTus: rtt, PeakMbps: peak, AvailMbps: avail, Measured: true}
	}
	if c.Derived {
		derivedLinks(&snap, c, sw, busy, noise)
		return snap
	}
	if c.PeerLinks == 0 {
		for i := range c.Nodes {
			for j := range c.Nodes {
				if i != j && (c.Unmeasured == 0 || r.Float64() >= c.Unmeasured) {
					snap.Links = append(snap.Links, link(i, j))
				}
			}
		}
		return snap
	}
	for i := range c.Nodes {
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < c.Nodes {
				snap.Links = append(snap.Links, link(i, j))
			}
		}
		for range c.PeerLinks {
			if j := r.IntN(c.Nodes); j != i {
				snap.Links = append(snap.Links, link(i, j))
			}
		}
	}
	return snap
}

// derivedLinks fills snap's links and traffic for Config.Derived from a
// random source of its own, so the nodes stay those of the same seed
// without it.
func derivedLinks(snap *placement.Snapshot, c Config, sw []int, busy, noise []float64) {
	r := rand.New(rand.NewPCG(uint64(c.Seed), 0xde517ed))
	n := c.Nodes
	port := func(s int) float64 { return portMbps[s%len(portMbps)] }
	// Each node's link as its own switch's peers measure it, each way.
	capOut, capIn := make([]float64, n), make([]float64, n)
	for i := range n {
		free := port(sw[i]) * (1 - busy[sw[i]]) * noise[i]
		capOut[i], capIn[i] = free*(0.9+0.1*r.Float64()), free*(0.9+0.1*r.Float64())
		// traffic now, bytes/s: a share of the port each way
		nd := &snap.Nodes[i]
		nd.NetTxBytesPerSec = port(sw[i]) * 1e6 / 8 * 0.3 * r.Float64() * r.Float64()
		nd.NetRxBytesPerSec = port(sw[i]) * 1e6 / 8 * 0.3 * r.Float64() * r.Float64()
	}
	// Vivaldi-like positions: a switch's nodes close together.
	type pos struct{ x, y float64 }
	swPos := make([]pos, c.Switches)
	for s := range swPos {
		swPos[s] = pos{r.Float64(), r.Float64()}
	}
	at := make([]pos, n)
	for i := range at {
		p := swPos[sw[i]]
		at[i] = pos{p.x + 0.05*r.Float64(), p.y + 0.05*r.Float64()}
	}
	est := func(i, j int) float64 {
		dx, dy := at[i].x-at[j].x, at[i].y-at[j].y
		return 1e3 * (0.05 + 1.5*math.Sqrt(dx*dx+dy*dy)) // µs
	}
	// The switch pairs' capacity: the slower port, shared with the other traffic.
	spCap := make([]float64, c.Switches*c.Switches)
	for a := range c.Switches {
		for b := range c.Switches {
			spCap[a*c.Switches+b] = min(port(a), port(b)) * (1 - max(busy[a], busy[b])) * 0.5
		}
	}
	spCap2 := func(a, b int) float64 { return spCap[min(a, b)*c.Switches+max(a, b)] }
	type pair struct{ i, j int }
	var direct []pair
	first := make([]int, c.Switches) // the first node of each switch
	for s := range first {
		first[s] = -1
	}
	for i := range n {
		if first[sw[i]] < 0 {
			first[sw[i]] = i
		}
		if j := i + 1; j < n && sw[j] == sw[i] {
			direct = append(direct, pair{i, j})
		}
	}
	for a := range c.Switches {
		for b := a + 1; b < c.Switches; b++ {
			if first[a] >= 0 && first[b] >= 0 {
				direct = append(direct, pair{first[a], first[b]})
			}
		}
	}
	tested := make(map[pair]bool, len(direct))
	rows := make([][]placement.Link, n)
	for _, p := range direct {
		i, j := p.i, p.j
		tested[p] = true
		out := min(capOut[i], capIn[j]) * (0.9 + 0.1*r.Float64())
		in := min(capOut[j], capIn[i]) * (0.9 + 0.1*r.Float64())
		pkOut, pkIn := min(port(sw[i]), port(sw[j])), min(port(sw[i]), port(sw[j]))
		if sw[i] != sw[j] {
			out, in = min(out, spCap2(sw[i], sw[j])), min(in, spCap2(sw[i], sw[j]))
		}
		l := placement.Link{From: snap.Nodes[i].Name, To: snap.Nodes[j].Name, RTTus: est(i, j), RTTEstimated: true,
			AvailMbps: min(out, in), PeakMbps: max(pkOut, pkIn), Measured: true,
			OutMbps: float32(out), InMbps: float32(in), PeakOutMbps: float32(pkOut), PeakInMbps: float32(pkIn)}
		rows[i] = append(rows[i], l)
		l.From, l.To = l.To, l.From
		l.OutMbps, l.InMbps, l.PeakOutMbps, l.PeakInMbps = l.InMbps, l.OutMbps, l.PeakInMbps, l.PeakOutMbps
		rows[j] = append(rows[j], l)
	}
	for _, row := range rows {
		snap.Links = append(snap.Links, row...)
	}
	// The switch pairs' RTT class, as netmodel takes the mean of the direct pairs'.
	spRTT := make([]float64, c.Switches*c.Switches)
	for a := range c.Switches {
		for b := range c.Switches {
			if first[a] >= 0 && first[b] >= 0 {
				spRTT[a*c.Switches+b] = est(first[a], first[b])
			}
		}
	}
	if c.Model {
		m := &placement.PairModel{NS: c.Switches, Sw: make([]int32, n), Known: make([]bool, n),
			Avail: make([]float64, n), Peak: make([]float64, n), Direct: make([][]placement.PairDirect, n),
			SwOK: make([]bool, len(spCap)), SwAvail: slices.Clone(spCap), SwPeak: make([]float64, len(spCap)), SwRTTus: spRTT}
		for i := range n {
			m.Sw[i], m.Known[i] = int32(sw[i]), true
			m.Avail[i], m.Peak[i] = min(capOut[i], capIn[i]), port(sw[i])
		}
		for a := range c.Switches {
			for b := range c.Switches {
				k := a*c.Switches + b
				m.SwOK[k], m.SwAvail[k], m.SwPeak[k] = true, spCap2(a, b), min(port(a), port(b))
			}
		}
		for _, p := range direct {
			m.Direct[p.i] = append(m.Direct[p.i], placement.PairDirect{J: int32(p.j), BW: true})
		}
		snap.Model = m
		return
	}
	snap.Links = slices.Grow(snap.Links, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if tested[pair{i, j}] {
				continue
			}
			avail := min(min(capOut[i], capIn[i]), min(capOut[j], capIn[j]))
			peak := min(port(sw[i]), port(sw[j]))
			if sw[i] != sw[j] {
				avail = min(avail, spCap2(sw[i], sw[j]))
			}
			snap.Links = append(snap.Links, placement.Link{From: snap.Nodes[i].Name, To: snap.Nodes[j].Name,
				RTTus: spRTT[sw[i]*c.Switches+sw[j]], AvailMbps: avail, PeakMbps: peak, Measured: true, Derived: true})
		}
	}
}
