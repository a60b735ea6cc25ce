package gossip

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

func bigRow(n int, bw float64) []nodestate.NetEntry {
	var row []nodestate.NetEntry
	for i := range n {
		row = append(row, nodestate.NetEntry{Peer: fmt.Sprintf("node%03d", i), RTT1us: 183, RTT5us: 191, AvailMbps: bw, PeakMbps: 948.7,
			BWAt: 1763789912345, RTTAt: 1763789990123,
			OutMbps: bw, InMbps: bw, PeakOutMbps: 948.7, PeakInMbps: 948.7, OutAt: 1763789912345, InAt: 1763789912345})
	}
	return row
}

// typicalState is a compute node's state as an agent gossips it.
func typicalState(name string) nodestate.NodeState {
	return nodestate.NodeState{Name: name, Boot: 1763790000000000000, Seq: 12345, Addr: "10.1.2.42", GossipPort: 7946, RaftPort: 7947,
		HTTPPort: 7948, ProbePort: 7949, Raft: nodestate.RaftInfo{Member: true},
		Static: nodestate.Static{Hostname: name + ".cluster.example.org", CPUModel: "Intel(R) Xeon(R) CPU E5-2670 v3 @ 2.30GHz", Cores: 12, Threads: 24, MHz: 2300,
			MemTotal: 64 << 30, PEs: []nodestate.PE{{Kind: "cpu", Count: 24}}},
		Dyn: nodestate.Dynamic{Load: nodestate.Means{Now: 1.23, M1: 1.5, M5: 1.7, M15: 1.8}, CPUUtil: nodestate.Means{Now: 12.5, M1: 13.25, M5: 14.125, M15: 15.5}, MemAvail: nodestate.Means{Now: 3.4e10, M1: 3.41e10, M5: 3.39e10, M15: 3.4e10},
			NetFlow: nodestate.Means{Now: 12345.6, M1: 23456.7, M5: 34567.8, M15: 45678.9}, Users: 3, SampledAt: 1763790000123,
			NetRxBytesPerSec: 118_750_000, NetTxBytesPerSec: 117_500_001}, // a saturated 1 Gbit/s link both ways
		// The coordinate rides on every broadcast too (coord.go).
		Coord: &nodestate.Coord{Vec: []float64{-1234.56, 987.65, -432.1, 2345.67, -88.88, 123.45, -1.23, 456.78}, Error: 0.1234,
			Adjust: -12.34, Height: 45.67},
		Probes: []nodestate.ProbeBeat{{Kind: "nodestate", State: "running", PID: 12345, Restarts: 0, Beat: 1763790000000}, {Kind: "latency", State: "running", PID: 12346, Restarts: 0, Beat: 1763790000000},
			{Kind: "bandwidth", State: "running", PID: 12347, Restarts: 0, Beat: 1763790000000}}}
}

// legacyState is a state as agents before rows left gossip sent it: the
// row, its version and the trimmed flag inline.
type legacyState struct {
	nodestate.NodeState
	Net        []nodestate.NetEntry `json:"net,omitempty"`
	NetV       uint64               `json:"nv,omitempty"`
	NetOmitted bool                 `json:"no,omitempty"`
}

// TestPushPull_1000StatesLinear: a node that learnt 999 peers' states,
// each sent by an older agent with a 50-peer row, answers push/pull (the
// real LocalState) with O(n) bytes and no row bytes. With rows back in
// NodeState this payload would be ~5.6 MB.
func TestPushPull_1000StatesLinear(t *testing.T) {
	t.Parallel()
	g := joinedCluster(t, 1, "pp")[0]
	defer g.Shutdown()
	const n = 1000
	var in []legacyState
	for i := 1; i < n; i++ {
		s := typicalState(fmt.Sprintf("node%04d", i))
		// An older agent's row has no per-direction fields (they came
		// with the rows' move to the servers); with them, 999 such
		// states pass the 8 MiB message cap and are refused whole.
		row := bigRow(50, 900)
		for j := range row {
			row[j].OutMbps, row[j].InMbps, row[j].PeakOutMbps, row[j].PeakInMbps, row[j].OutAt, row[j].InAt = 0, 0, 0, 0, 0, 0
		}
		in = append(in, legacyState{NodeState: s, Net: row, NetV: 3})
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	d, ev := (*delegate)(g), (*events)(g)
	d.MergeRemoteState(append([]byte{msgStates, wireV1}, body...), false)
	for _, s := range in {
		ev.NotifyJoin(&memberlist.Node{Name: s.Name})
	}
	b := d.LocalState(false)
	ss, err := nodestate.DecodeStates(b)
	if err != nil || len(ss) != n {
		t.Fatalf("push/pull holds %d states (want %d): %v", len(ss), n, err)
	}
	per := len(b) / n
	t.Logf("push/pull of %d states: %d bytes (%d per state); the legacy payload received was %d bytes", n, len(b), per, len(body))
	if len(b) >= 1<<20 {
		t.Fatalf("push/pull of %d states is %d bytes, want under 1 MiB", n, len(b))
	}
	if bytes.Contains(b, []byte(`"net"`)) || bytes.Contains(b, []byte(`"r1"`)) {
		t.Fatal("push/pull carries row bytes")
	}
}
