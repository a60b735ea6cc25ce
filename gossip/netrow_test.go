package gossip

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

func bigRow(n int, bw float64) []NetEntry {
	var row []NetEntry
	for i := range n {
		row = append(row, NetEntry{Peer: fmt.Sprintf("node%03d", i), RTT1: 183, RTT5: 191, BW: bw, Peak: 948.7,
			BWAt: 1763789912345, RTTAt: 1763789990123,
			BWOut: bw, BWIn: bw, PeakOut: 948.7, PeakIn: 948.7, BWOutAt: 1763789912345, BWInAt: 1763789912345})
	}
	return row
}

// TestNetRow_SizeAt100Nodes reports the row's size at 100 nodes and checks
// that the broadcast of such a state fits one packet.
func TestNetRow_SizeAt100Nodes(t *testing.T) {
	t.Parallel()
	s := NodeState{Name: "node042", Boot: 1763790000000000000, Seq: 12345, Addr: "10.1.2.42", GossipPort: 7946, RaftPort: 7947,
		HTTPPort: 7948, ProbePort: 7949,
		Static: Static{Hostname: "node042", CPUModel: "Intel(R) Xeon(R) CPU E5-2670 v3 @ 2.30GHz", Cores: 12, Threads: 24, MHz: 2300,
			MemTotal: 64 << 30, PEs: []PE{{Kind: "cpu", Count: 24}}},
		Dyn: Dynamic{Load: Means{1.23, 1.5, 1.7, 1.8}, CPUUtil: Means{12.5, 13.25, 14.125, 15.5}, MemAvail: Means{3.4e10, 3.41e10, 3.39e10, 3.4e10},
			NetFlow: Means{12345.6, 23456.7, 34567.8, 45678.9}, Users: 3, SampledAt: 1763790000123,
			NetRx: 118_750_000, NetTx: 117_500_001}, // a saturated 1 Gbit/s link both ways
		// The coordinate rides on every broadcast too (coord.go).
		Coord: &Coord{Vec: []float64{-1234.56, 987.65, -432.1, 2345.67, -88.88, 123.45, -1.23, 456.78}, Error: 0.1234,
			Adjust: -12.34, Height: 45.67},
		Probes: []ProbeBeat{{"nodestate", "running", 12345, 0, 1763790000000}, {"latency", "running", 12346, 0, 1763790000000},
			{"bandwidth", "running", 12347, 0, 1763790000000}}}
	bare, _ := EncodeState(&s)
	s.Net, s.NetV = bigRow(99, 941.2), 12345
	full, _ := EncodeState(&s)
	bc, err := encodeBroadcast(&s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("state without row %d B; 99-entry row %d B (%d B/peer); full state %d B; trimmed broadcast %d B",
		len(bare), len(full)-len(bare), (len(full)-len(bare))/99, len(full), len(bc))
	if len(bc) > broadcastBudget {
		t.Fatalf("broadcast of %d B exceeds %d", len(bc), broadcastBudget)
	}
	if small, _ := encodeBroadcast(&NodeState{Name: "a", Net: bigRow(3, 1)}); len(small) > broadcastBudget || !bytes.Contains(small, []byte(`"net"`)) {
		t.Fatalf("a small row must stay in the broadcast: %s", small)
	}
}

// TestNetRow_TrimmedBroadcastKeepsRow: a trimmed broadcast updates the
// rest of the state and keeps the row; push/pull's full copy of the same
// or an older Seq brings a newer row; an older row never replaces one.
func TestNetRow_TrimmedBroadcastKeepsRow(t *testing.T) {
	t.Parallel()
	tb := NewTable("me")
	rowA, rowB := bigRow(2, 100), bigRow(2, 200)
	tb.Merge(NodeState{Name: "x", Boot: 1, Seq: 5, Net: rowA, NetV: 5}, true)
	if !tb.Merge(NodeState{Name: "x", Boot: 1, Seq: 6, NetOmitted: true, NetV: 6, Dyn: Dynamic{Users: 7}}, true) {
		t.Fatal("newer trimmed state refused")
	}
	e, _ := tb.Get("x")
	if e.State.Dyn.Users != 7 || len(e.State.Net) != 2 || e.State.Net[0].BW != 100 || e.State.NetV != 5 || e.State.NetOmitted {
		t.Fatalf("after trimmed broadcast: %+v", e.State)
	}
	if !tb.Merge(NodeState{Name: "x", Boot: 1, Seq: 6, Net: rowB, NetV: 6, Dyn: Dynamic{Users: 7}}, true) {
		t.Fatal("full copy of the same seq with a newer row refused")
	}
	e, _ = tb.Get("x")
	if e.State.Net[0].BW != 200 || e.State.NetV != 6 {
		t.Fatalf("row not taken: %+v", e.State)
	}
	if tb.Merge(NodeState{Name: "x", Boot: 1, Seq: 5, Net: rowA, NetV: 5}, true) {
		t.Fatal("older row taken")
	}
	// A new boot starts without the old boot's row.
	tb.Merge(NodeState{Name: "x", Boot: 2, Seq: 1, NetOmitted: true, NetV: 1}, true)
	if e, _ = tb.Get("x"); len(e.State.Net) != 0 {
		t.Fatalf("row of an earlier boot kept: %+v", e.State.Net)
	}
}

// TestNetRow_SpreadsWithBigRows measures, on loopback, how fast a node's
// load (by broadcast) and its 99-peer row (by push/pull, every 2 s in
// TestConfig) reach two peers.
func TestNetRow_SpreadsWithBigRows(t *testing.T) {
	t.Parallel()
	nodes := joinedCluster(t, 3, "r")
	defer shutdownAll(nodes)
	waitFor(t, 10*time.Second, "3 members", func() bool { return nodes[2].NumAlive() == 3 })
	start := time.Now()
	nodes[0].Update(func(s *NodeState) { s.Net = bigRow(99, 500) })
	nodes[0].Update(func(s *NodeState) { s.Dyn.Users = 42 })
	seen := func(cond func(NodeState) bool) bool {
		for _, g := range nodes[1:] {
			e, ok := g.table0("r0")
			if !ok || !cond(e) {
				return false
			}
		}
		return true
	}
	waitFor(t, 5*time.Second, "the load update to spread", func() bool { return seen(func(s NodeState) bool { return s.Dyn.Users == 42 }) })
	dyn := time.Since(start)
	waitFor(t, 15*time.Second, "the 99-peer row to spread", func() bool {
		return seen(func(s NodeState) bool { return len(s.Net) == 99 && s.Dyn.Users == 42 })
	})
	t.Logf("3 nodes, 99-peer row: load update everywhere after %v (broadcast), row after %v (push/pull every %v)",
		dyn.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), TestConfig().PushPullInterval)
}

func (g *Gossip) table0(name string) (NodeState, bool) {
	e, ok := g.Node(name)
	return e.State, ok && e.HasState
}
