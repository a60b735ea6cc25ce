package gossip

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// benchState is one node's state as a running cluster gossips it: PEs,
// features, probe heartbeats, a coordinate, raft standing and means.
func benchState(i int) nodestate.NodeState {
	s := sampleState()
	s.Name = fmt.Sprintf("node%04d", i)
	s.Static.Hostname = s.Name
	s.Static.Features = []string{"ib", "nvme"}
	s.Probes = []nodestate.ProbeBeat{{Kind: "lat", State: "running", PID: 100 + i, Beat: 1700000000000}, {Kind: "bw", State: "running", PID: 200 + i, Beat: 1700000000000}}
	s.Raft = nodestate.RaftInfo{Member: i < 5, Proposal: []string{"node0000", "node0001", "node0002"}, Term: 3, Index: 1200}
	vec := make([]float64, nodestate.CoordDims)
	for d := range vec {
		vec[d] = float64(i*d) / 10
	}
	s.Coord = &nodestate.Coord{Vec: vec, Error: 0.2, Height: 15}
	return s
}

// fillTable merges n realistic states, each a few times with its traffic
// changing so that the table holds a traffic history per node, and marks
// them alive.
func fillTable(tb *Table, n int, now time.Time) {
	for i := range n {
		s := benchState(i)
		for k := range 4 {
			s.Seq++
			s.Dyn.SampledAt += 1000
			s.Dyn.NetRxBytesPerSec = float64(k+1) * 10e6
			s.Dyn.NetTxBytesPerSec = float64(k+1) * 5e6
			tb.Merge(s, true)
		}
		tb.SetStatus(s.Name, nodestate.StatusAlive, now)
	}
}

// BenchmarkNodes reads the table as the agent's loops do (probes every
// 250 ms, roles every 500 ms, the event pump): Gossip.Nodes on a node whose
// table holds n peers. Memberlist lists only the node itself, so what is
// measured is the table's read, not the members' snapshot.
func BenchmarkNodes(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			g := startNode(b, "bench", 0, nil, 0)
			defer func() { _ = g.Shutdown() }()
			g.mu.Lock()
			fillTable(g.table, n, g.now())
			g.mu.Unlock()
			if got := len(g.Nodes()); got != n+1 {
				b.Fatalf("Nodes holds %d entries, want %d", got, n+1)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = g.Nodes()
			}
		})
	}
}
