package placement

import (
	"math"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

// T's compute load counts how busy a node is (a share of its cores, of
// 100 % CPU, of its memory), not how its figure compares with the other
// nodes'; node flow leaves it when the network term can see every node's
// traffic per direction. Eq. 1 (shares false, the paper policy's) is
// unchanged.
func TestComputeLoads_Shares(t *testing.T) {
	t.Parallel()
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	at := func(v float64) nodestate.Means { return nodestate.Means{Now: v, M1: v} }
	nodes := func(loads ...float64) []*Node {
		var out []*Node
		for _, l := range loads {
			out = append(out, &Node{Cores: 2, Load: at(l)})
		}
		return out
	}

	load := AttrWeights{Load: 1, M1: 1}
	idle := nodes(0.02, 0.06, 0, 5)
	if cl, _, _ := computeLoads(idle, &load, false, nil); !near(cl[0], 0.02/5.08) || !near(cl[3], 5/5.08) {
		t.Fatalf("Eq. 1: each load over their sum: %v", cl)
	}
	// Shares: 0.02 and 0.06 of 2 cores are 1 % and 3 % busy, a load of 5
	// fills the node (at most 1); each over the node count.
	cl, _, _ := computeLoads(idle, &load, true, nil)
	if want := []float64{0.01 / 4, 0.03 / 4, 0, 1.0 / 4}; !near(cl[0], want[0]) || !near(cl[1], want[1]) || !near(cl[2], want[2]) || !near(cl[3], want[3]) {
		t.Fatalf("shares of the cores: %v, want %v", cl, want)
	}

	util := AttrWeights{CPUUtil: 1, M1: 1}
	busy := []*Node{{Cores: 2, CPUUtil: at(50)}, {Cores: 2, CPUUtil: at(150)}, {Cores: 2}}
	if cl, _, _ := computeLoads(busy, &util, true, nil); !near(cl[0], 0.5/3) || !near(cl[1], 1.0/3) || !near(cl[2], 0) {
		t.Fatalf("shares of 100 %% CPU: %v, want [1/6 1/3 0]", cl)
	}

	// Used memory: 6 of 8 GiB used is 3/4; more available than the total
	// (a stale sample) is 0 used; busy and busyWeight say what went into
	// shares. A node without a total sends memory back to Eq. 1 for all.
	mem := AttrWeights{MemAvail: 1, M1: 1}
	gib := func(g float64) nodestate.Means { return nodestate.Means{M1: g * (1 << 30)} }
	mnodes := []*Node{{Cores: 2, MemTotal: 8 << 30, MemAvail: gib(2)}, {Cores: 2, MemTotal: 8 << 30, MemAvail: gib(9)}}
	cl, shared, bw := computeLoads(mnodes, &mem, true, nil)
	if !near(cl[0], 0.75/2) || !near(cl[1], 0) || !near(shared, 0.75/2) || !near(bw, 1) {
		t.Fatalf("used memory: cl %v busy %v weight %v, want [3/8 0], 3/8, 1", cl, shared, bw)
	}
	mnodes[1].MemTotal = 0
	cl, shared, bw = computeLoads(mnodes, &mem, true, nil)
	if !near(cl[0], 9.0/11-2.0/11) || !near(cl[1], 0) || shared != 0 || bw != 0 {
		t.Fatalf("a node without a total: cl %v busy %v weight %v, want Eq. 1's complement of available memory, nothing in shares", cl, shared, bw)
	}
	if _, busy, bw := computeLoads(idle, &load, false, nil); busy != 0 || bw != 0 {
		t.Fatalf("Eq. 1: busy %v weight %v, want 0", busy, bw)
	}

	flow := AttrWeights{NetFlow: 1, M1: 1}
	mbps := func(m float64) nodestate.Means { return nodestate.Means{Now: m * 1e6 / 8, M1: m * 1e6 / 8} }
	light := []*Node{{Cores: 2, NetFlow: mbps(30)}, {Cores: 2}, {Cores: 2}, {Cores: 2}}
	if cl, _, _ := computeLoads(light, &flow, false, nil); !near(cl[0], 1) || !near(cl[1], 0) {
		t.Fatalf("Eq. 1: 30 Mbit/s on one node of four takes the whole weight: %v", cl)
	}
	// Every link measured but no traffic per direction reported (an agent
	// whose sampler does not tell the directions apart): the share of the
	// link, 30/200 over four nodes, counted as busy.
	rates := []float64{200, 200, 200, 200}
	if cl, shared, bw := computeLoads(light, &flow, true, rates); !near(cl[0], 0.15/4) || !near(cl[1], 0) || !near(shared, 0.15/4) || !near(bw, 1) {
		t.Fatalf("rates but no directions: cl %v busy %v weight %v, want [0.0375 0 0 0], 0.0375, 1", cl, shared, bw)
	}
	// With the traffic per direction the network term reads it: flow
	// leaves the compute load.
	light[0].NetTxBytesPerSec = 30e6 / 8
	if cl, shared, bw := computeLoads(light, &flow, true, rates); !near(cl[0], 0) || shared != 0 || bw != 0 {
		t.Fatalf("T with the traffic per direction: flow is the network term's, got cl %v busy %v weight %v", cl, shared, bw)
	}
	if cl, _, _ := computeLoads(light, &flow, true, []float64{200, 0, 200, 200}); !near(cl[0], 1) {
		t.Fatalf("a node without a measured link: %v, want Eq. 1's flow for all", cl)
	}
}
