package synth

import (
	"fmt"
	"math/rand/v2"

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
		jit := func(v float64) placement.Means {
			return placement.Means{Now: v * (0.9 + 0.2*r.Float64()), M1: v, M5: v * (0.85 + 0.3*r.Float64()), M15: v * (0.8 + 0.4*r.Float64())}
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
			n.PEs = []placement.PE{{Kind: "gpu", Model: "T4", Count: 1 + r.IntN(4)}}
		}
		snap.Nodes[i] = n
	}
	link := func(i, j int) placement.Link {
		si, sj := sw[i], sw[j]
		var peak, avail, rtt float64
		if si == sj {
			peak = portMbps[si%len(portMbps)]
			avail = peak * (1 - busy[si]) * min(noise[i], noise[j])
			rtt = 0.05 + 0.15*r.Float64()
		} else {
			// through the uplinks: the slower port, shared with the other traffic
			peak = min(portMbps[si%len(portMbps)], portMbps[sj%len(portMbps)])
			avail = peak * (1 - max(busy[si], busy[sj])) * (0.3 + 0.4*r.Float64()) * min(noise[i], noise[j])
			rtt = 0.3 + 1.2*r.Float64()
		}
		return placement.Link{From: snap.Nodes[i].Name, To: snap.Nodes[j].Name,
			RTTms: rtt, PeakMbps: peak, AvailMbps: avail, Measured: true}
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
