package main

import (
	"fmt"
	"math"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// model is the topology as configured: every pair's path, its bottleneck
// rate, and what the background flows leave of it.
type model struct {
	topo   netns.Topology
	sw     map[string]string // node -> switch
	rate   map[string]int    // node -> link Mbit/s
	uplink map[[2]string]int // switch pair (sorted) -> Mbit/s
}

func newModel(topo netns.Topology) *model {
	m := &model{topo: topo, sw: map[string]string{}, rate: map[string]int{}, uplink: map[[2]string]int{}}
	for _, n := range topo.Nodes {
		m.sw[n.Name], m.rate[n.Name] = n.Switch, n.Mbit
		if n.Unshaped {
			m.rate[n.Name] = 10000
		}
	}
	for _, u := range topo.Uplinks {
		r := u.Mbit
		if u.Unshaped {
			r = 10000
		}
		m.uplink[key(u.A, u.B)] = r
	}
	return m
}

func key(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// switchPath is the chain of switches from a to b over the uplink forest.
func (m *model) switchPath(a, b string) []string {
	prev := map[string]string{a: ""}
	queue := []string{a}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s == b {
			break
		}
		for k := range m.uplink {
			for i, x := range k {
				y := k[1-i]
				if x == s {
					if _, seen := prev[y]; !seen {
						prev[y] = s
						queue = append(queue, y)
					}
				}
			}
		}
	}
	if _, ok := prev[b]; !ok {
		return nil
	}
	var path []string
	for s := b; s != ""; s = prev[s] {
		path = append([]string{s}, path...)
	}
	return path
}

// links are the shaped links a path from node a to node b crosses, as
// names: "node:NAME" or "up:SW1-SW2".
func (m *model) links(a, b string) []string {
	out := []string{"node:" + a, "node:" + b}
	p := m.switchPath(m.sw[a], m.sw[b])
	for i := 0; i+1 < len(p); i++ {
		k := key(p[i], p[i+1])
		out = append(out, "up:"+k[0]+"-"+k[1])
	}
	return out
}

func (m *model) linkRate(l string) float64 {
	if len(l) > 5 && l[:5] == "node:" {
		return float64(m.rate[l[5:]])
	}
	for k, r := range m.uplink {
		if "up:"+k[0]+"-"+k[1] == l {
			return float64(r)
		}
	}
	return math.Inf(1)
}

// pair is a pair's configured bottleneck (peak) and what the background
// flows crossing the same links leave of it (avail).
func (m *model) pair(a, b string) (peak, avail float64, hops int) {
	used := map[string]float64{}
	for _, f := range m.topo.Flows {
		rate := float64(f.Mbit)
		if rate == 0 {
			rate = math.Inf(1)
		}
		for _, l := range m.links(f.From, f.To) {
			used[l] = math.Min(used[l]+rate, m.linkRate(l))
		}
	}
	peak, avail = math.Inf(1), math.Inf(1)
	for _, l := range m.links(a, b) {
		r := m.linkRate(l)
		peak = math.Min(peak, r)
		avail = math.Min(avail, math.Max(r-used[l], 0.05*r))
	}
	return peak, avail, len(m.switchPath(m.sw[a], m.sw[b])) - 1
}

// snapshot is what a perfect monitor would tell placement: identical
// nodes, load = the node's hogs plus its reported background load (what
// the lab's agents read), node flow = the background flows it sends or
// receives, and every pair's configured rates.
func (m *model) snapshot() placement.Snapshot {
	var s placement.Snapshot
	hogs := map[string]int{}
	for _, h := range m.topo.Hogs {
		hogs[h.Node] += h.Workers
	}
	flow := map[string]float64{} // bytes/s in+out, as agents report it
	for _, f := range m.topo.Flows {
		rate := float64(f.Mbit) * 1e6 / 8
		flow[f.From] += rate
		flow[f.To] += rate
	}
	for _, n := range m.topo.Nodes {
		l := float64(hogs[n.Name]) + n.Load
		fl := flow[n.Name]
		u := 50 * float64(hogs[n.Name]) // only hogs burn CPU
		s.Nodes = append(s.Nodes, placement.Node{
			Name: n.Name, Alive: true, Switch: n.Switch,
			Cores: 2, Threads: 2, MHz: 2000, MemTotal: 8 << 30,
			Load:     placement.Means{Now: l, M1: l, M5: l, M15: l},
			CPUUtil:  placement.Means{Now: u, M1: u, M5: u, M15: u},
			MemAvail: placement.Means{Now: 6 << 30, M1: 6 << 30, M5: 6 << 30, M15: 6 << 30},
			NetFlow:  placement.Means{Now: fl, M1: fl, M5: fl, M15: fl},
		})
	}
	for i, a := range m.topo.Nodes {
		for _, b := range m.topo.Nodes[i+1:] {
			peak, avail, hops := m.pair(a.Name, b.Name)
			rtt := 0.1 + 0.1*float64(hops)
			s.Links = append(s.Links,
				placement.Link{From: a.Name, To: b.Name, RTTms: rtt, AvailMbps: avail, PeakMbps: peak, Measured: true},
				placement.Link{From: b.Name, To: a.Name, RTTms: rtt, AvailMbps: avail, PeakMbps: peak, Measured: true})
		}
	}
	return s
}

// oracle is the best group of np nodes (one process each) for a
// communication-bound program, by brute force over every group under the
// configured rates: no node whose CPU a hog starves, then the fastest
// slowest pair (what the program's exchanges wait for), then the fewest
// switches, then the most bandwidth over all pairs, then names. It knows
// what placement cannot: the configured rates and which load is real.
func (m *model) oracle(np int) ([]string, error) {
	hog := map[string]bool{}
	for _, h := range m.topo.Hogs {
		hog[h.Node] = true
	}
	var free []string
	for _, n := range m.topo.Nodes {
		if !hog[n.Name] {
			free = append(free, n.Name)
		}
	}
	if np < 1 || np > len(free) {
		return nil, fmt.Errorf("oracle: %d nodes wanted, %d without hogs", np, len(free))
	}
	type score struct {
		minAvail float64
		switches int
		sum      float64
	}
	better := func(a, b score) bool {
		if a.minAvail != b.minAvail {
			return a.minAvail > b.minAvail
		}
		if a.switches != b.switches {
			return a.switches < b.switches
		}
		return a.sum > b.sum
	}
	var best []string
	var bestScore score
	group := make([]string, 0, np)
	var walk func(from int)
	walk = func(from int) {
		if len(group) == np {
			sc := score{minAvail: math.Inf(1)}
			sws := map[string]bool{}
			for i, a := range group {
				sws[m.sw[a]] = true
				for _, b := range group[i+1:] {
					_, avail, _ := m.pair(a, b)
					sc.minAvail = math.Min(sc.minAvail, avail)
					sc.sum += avail
				}
			}
			sc.switches = len(sws)
			if best == nil || better(sc, bestScore) {
				best, bestScore = append([]string(nil), group...), sc
			}
			return
		}
		for i := from; i < len(free); i++ {
			group = append(group, free[i])
			walk(i + 1)
			group = group[:len(group)-1]
		}
	}
	walk(0)
	return best, nil
}

// tOracle is the group with the least T (shoal's objective, with
// netload's defaults) by brute force over a perfect monitor's snapshot:
// what netload would choose if its measurements were exact. Comparing it
// with the oracle separates the model's error from the measurements'.
func (m *model) tOracle(np, ppn int) ([]string, placement.Decision, error) {
	d, err := placement.Oracle(m.snapshot(), placement.Request{N: np, PPN: ppn, Oversubscribe: true, Force: true})
	if err != nil {
		return nil, d, fmt.Errorf("t-oracle: %w", err)
	}
	if d.Wait {
		return nil, d, fmt.Errorf("t-oracle: wait: %s", d.WaitReason)
	}
	return ranksOf(d), d, nil
}

// ranksOf lists a decision's hosts once per rank, in rank order (the
// inverse of slotsOf).
func ranksOf(d placement.Decision) []string {
	var ranks []string
	for _, h := range d.Hosts {
		for range h.Procs {
			ranks = append(ranks, h.Node)
		}
	}
	return ranks
}

// groupStats describes a group (one host per rank) under the configured
// model: the slowest pair of distinct nodes' available rate, how many
// switches it spans, and its hog nodes.
func (m *model) groupStats(ranks []string) (minAvail float64, switches, loaded int) {
	var hosts []string
	for _, h := range slotsOf(ranks) {
		hosts = append(hosts, h.Node)
	}
	minAvail = math.Inf(1)
	sws := map[string]bool{}
	hogs := map[string]bool{}
	for _, h := range m.topo.Hogs {
		hogs[h.Node] = true
	}
	for i, a := range hosts {
		sws[m.sw[a]] = true
		if hogs[a] {
			loaded++
		}
		for _, b := range hosts[i+1:] {
			_, avail, _ := m.pair(a, b)
			minAvail = math.Min(minAvail, avail)
		}
	}
	if len(hosts) < 2 {
		minAvail = 0
	}
	return minAvail, len(sws), loaded
}
