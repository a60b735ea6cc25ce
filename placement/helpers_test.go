package placement_test

import (
	"fmt"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

// node builds a plain live node: cores logical cores, the given 1-min load
// (same in every horizon), equal everything else so only load ranks them.
func node(name string, cores int, load float64) placement.Node {
	m := nodestate.Means{Now: load, M1: load, M5: load, M15: load}
	return placement.Node{
		Name: name, Alive: true, Switch: "sw0", Cores: cores, MHz: 3000, MemTotal: 16 << 30,
		Load: m, MemAvail: nodestate.Means{Now: 8 << 30, M1: 8 << 30, M5: 8 << 30, M15: 8 << 30},
	}
}

// link is a measured link with its RTT given in ms, as the tests' figures
// are written.
func link(a, b string, rttMs, avail, peak float64) placement.Link {
	return placement.Link{From: a, To: b, RTTus: rttMs * 1e3, AvailMbps: avail, PeakMbps: peak, Measured: true}
}

// fullMesh links every pair of nodes with the same link.
func fullMesh(nodes []placement.Node, rtt, avail, peak float64) []placement.Link {
	var ls []placement.Link
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			ls = append(ls, link(nodes[i].Name, nodes[j].Name, rtt, avail, peak))
		}
	}
	return ls
}

func total(d placement.Decision) int {
	t := 0
	for _, h := range d.Hosts {
		t += h.NP
	}
	return t
}

func hostsString(d placement.Decision) string {
	s := ""
	for _, h := range d.Hosts {
		s += fmt.Sprintf("%s:%d ", h.Node, h.NP)
	}
	return s
}
