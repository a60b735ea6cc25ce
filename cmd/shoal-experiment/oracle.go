package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// model is the topology as configured, per direction: every ordered
// pair's path, its bottleneck rate, and what the background flows leave of
// it. A flow uses its sender's link out, the uplinks on its way in its
// direction, and its receiver's link in; the other direction stays free
// (its ACKs are noise).
type model struct {
	topo    netns.Topology
	sw      map[string]string      // node -> switch
	out, in map[string]int         // node -> link Mbit/s away from / toward it
	uplink  map[[2]string]int      // (from switch, to switch) -> Mbit/s
	adj     map[string][]string    // switch -> neighbour switches
	paths   map[[2]string][]string // switch pair -> switch path, memoised
}

// newModel is the topology before any scheduled change.
func newModel(topo netns.Topology) *model { return newModelAt(topo, 0) }

// newModelAt is the topology with its first k scheduled changes applied.
func newModelAt(topo netns.Topology, k int) *model {
	m := &model{topo: topo, sw: map[string]string{}, out: map[string]int{}, in: map[string]int{},
		uplink: map[[2]string]int{}, adj: map[string][]string{}, paths: map[[2]string][]string{}}
	for _, n := range topo.Nodes {
		m.sw[n.Name], m.out[n.Name], m.in[n.Name] = n.Switch, n.Mbit, n.In()
		if n.Unshaped {
			m.out[n.Name], m.in[n.Name] = 10000, 10000
		}
	}
	for _, c := range topo.Changes[:min(k, len(topo.Changes))] {
		m.out[c.Node], m.in[c.Node] = c.Mbit, c.In()
	}
	for _, u := range topo.Uplinks {
		ab, ba := u.Mbit, u.BA()
		if u.Unshaped {
			ab, ba = 10000, 10000
		}
		m.uplink[[2]string{u.A, u.B}], m.uplink[[2]string{u.B, u.A}] = ab, ba
		m.adj[u.A] = append(m.adj[u.A], u.B)
		m.adj[u.B] = append(m.adj[u.B], u.A)
	}
	return m
}

// switchPath is the chain of switches from a to b over the uplink forest.
func (m *model) switchPath(a, b string) []string {
	if p, ok := m.paths[[2]string{a, b}]; ok {
		return p
	}
	prev := map[string]string{a: ""}
	queue := []string{a}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s == b {
			break
		}
		for _, y := range m.adj[s] {
			if _, seen := prev[y]; !seen {
				prev[y] = s
				queue = append(queue, y)
			}
		}
	}
	var path []string
	if _, ok := prev[b]; ok {
		for s := b; s != ""; s = prev[s] {
			path = append([]string{s}, path...)
		}
	}
	m.paths[[2]string{a, b}] = path
	return path
}

// links are the shaped links a transfer from node a to node b crosses, in
// its direction: "out:A", "up:S1>S2"..., "in:B".
func (m *model) links(a, b string) []string {
	out := []string{"out:" + a, "in:" + b}
	p := m.switchPath(m.sw[a], m.sw[b])
	for i := 0; i+1 < len(p); i++ {
		out = append(out, "up:"+p[i]+">"+p[i+1])
	}
	return out
}

func (m *model) linkRate(l string) float64 {
	kind, name, _ := strings.Cut(l, ":")
	switch kind {
	case "out":
		return float64(m.out[name])
	case "in":
		return float64(m.in[name])
	case "up":
		a, b, _ := strings.Cut(name, ">")
		return float64(m.uplink[[2]string{a, b}])
	}
	return math.Inf(1)
}

// pair is the transfer a -> b's configured bottleneck (peak) and what the
// background flows crossing the same links in the same direction leave
// of it (avail; a flow without a cap fills its links, leaving 5 %).
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

// flowRate is what a background flow carries, Mbit/s: its cap, or
// without one its path's bottleneck (an uncapped iperf3 fills it).
func (m *model) flowRate(f netns.Flow) float64 {
	peak, _, _ := m.pair(f.From, f.To)
	if f.Mbit > 0 {
		return math.Min(float64(f.Mbit), peak)
	}
	return peak
}

// slowest is the least avail over both directions of a pair: what a
// program exchanging both ways waits for.
func (m *model) slowest(a, b string) float64 {
	_, ab, _ := m.pair(a, b)
	_, ba, _ := m.pair(b, a)
	return math.Min(ab, ba)
}

// snapshot is what a perfect monitor would tell placement: identical
// nodes, load = the node's hogs plus its reported background load (what
// the lab's agents read), node flow = the background flows it sends or
// receives, and every ordered pair's configured rates in its direction.
func (m *model) snapshot() placement.Snapshot {
	var s placement.Snapshot
	hogs := map[string]int{}
	for _, h := range m.topo.Hogs {
		hogs[h.Node] += h.Workers
	}
	flow := map[string]float64{} // bytes/s in+out, as agents report it
	tx, rx := map[string]float64{}, map[string]float64{}
	for _, f := range m.topo.Flows {
		rate := m.flowRate(f) * 1e6 / 8
		flow[f.From] += rate
		flow[f.To] += rate
		tx[f.From] += rate
		rx[f.To] += rate
	}
	for _, n := range m.topo.Nodes {
		l := float64(hogs[n.Name]) + n.Load
		fl := flow[n.Name]
		u := 50 * float64(hogs[n.Name]) // only hogs burn CPU
		s.Nodes = append(s.Nodes, placement.Node{
			Name: n.Name, Alive: true, Switch: n.Switch,
			Cores: 2, Threads: 2, MHz: 2000, MemTotal: 8 << 30,
			Load:             nodestate.Means{Now: l, M1: l, M5: l, M15: l},
			CPUUtil:          nodestate.Means{Now: u, M1: u, M5: u, M15: u},
			MemAvail:         nodestate.Means{Now: 6 << 30, M1: 6 << 30, M5: 6 << 30, M15: 6 << 30},
			NetFlow:          nodestate.Means{Now: fl, M1: fl, M5: fl, M15: fl},
			NetTxBytesPerSec: tx[n.Name], NetRxBytesPerSec: rx[n.Name],
		})
	}
	for i, a := range m.topo.Nodes {
		for _, b := range m.topo.Nodes[i+1:] {
			pab, aab, hops := m.pair(a.Name, b.Name)
			pba, aba, _ := m.pair(b.Name, a.Name)
			rttUs := 100 + 100*float64(hops)
			// One link per pair with both directions, as the agents'
			// rows carry them; AvailMbps the worse
			// direction and PeakMbps the faster, as placement.Link says.
			s.Links = append(s.Links, placement.Link{From: a.Name, To: b.Name, RTTus: rttUs,
				AvailMbps: math.Min(aab, aba), PeakMbps: math.Max(pab, pba), Measured: true,
				OutMbps: float32(aab), InMbps: float32(aba), PeakOutMbps: float32(pab), PeakInMbps: float32(pba)})
		}
	}
	return s
}

// oracle is the best group of np nodes (one process each) for a
// communication-bound program, by brute force over every group under the
// configured rates: no node whose CPU a hog starves, then the fastest
// slowest pair in its slower direction (what the program's exchanges
// wait for), then the fewest
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
					avail := m.slowest(a, b)
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
		for range h.NP {
			ranks = append(ranks, h.Node)
		}
	}
	return ranks
}

// groupStats describes a group (one host per rank) under the configured
// model: the slowest pair of distinct nodes' available rate (its slower
// direction), how many
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
			minAvail = math.Min(minAvail, m.slowest(a, b))
		}
	}
	if len(hosts) < 2 {
		minAvail = 0
	}
	return minAvail, len(sws), loaded
}
