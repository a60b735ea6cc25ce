package leader

import (
	"reflect"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probeplan"
)

// TestNodeOf: everything the core decides on reaches it from the gossiped
// entry and the row, each quantity in the unit the core reads: the
// placement attributes, the traffic steps and each direction's test time
// (stamp.go), the raft address, the coordinate in seconds, the link
// verdict.
func TestNodeOf(t *testing.T) {
	t.Parallel()
	since := time.UnixMilli(5000)
	e := nodestate.Entry{Status: nodestate.StatusAlive, Since: since, HasState: true,
		Traffic: []nodestate.TrafficPoint{{At: 1000, Tx: 3.75e6}, {At: 4000, Rx: 1e6, Tx: 3.75e6}},
		State: nodestate.NodeState{Name: "n1", Addr: "fe80::1", RaftPort: 7947, ProbePort: 7949,
			Raft: nodestate.RaftInfo{Member: true},
			Static: nodestate.Static{Cores: 4, Threads: 8, MHz: 2400, MemTotal: 8 << 30, Switch: "sw1", Confined: true,
				Features: []string{"ib"}, PEs: []nodestate.PE{{Kind: "gpu", Model: "A100", Count: 2}}},
			Dyn: nodestate.Dynamic{Load: nodestate.Means{Now: 1, M1: 2, M5: 3, M15: 4}, CPUUtil: nodestate.Means{Now: 50},
				MemAvail: nodestate.Means{Now: 4e9}, NetFlow: nodestate.Means{Now: 9}, NetRxBytesPerSec: 1e6, NetTxBytesPerSec: 3.75e6, NetWindowMs: 200, Users: 2, SampledAt: 4100},
			Probes: []nodestate.ProbeBeat{{Kind: "bandwidth", State: "running", PID: 12, Restarts: 1, Beat: 4000}},
			Coord:  &nodestate.Coord{Vec: []float64{100, 0, 0, 0, 0, 0, 0, 0}, Error: 0.2, Height: 10},
			Link:   &nodestate.LinkState{Change: "slower", Mbps: 40, Since: 3000, At: 4000}}}
	row := []nodestate.NetEntry{{Peer: "n2", RTT1us: 120, OutMbps: 48, InMbps: 43, OutAt: 10000, InAt: 10500}}
	n := NodeOf(e, row)
	want := placement.Node{Name: "n1", Switch: "sw1", Cores: 4, Threads: 8, MHz: 2400, MemTotal: 8 << 30,
		Load: e.State.Dyn.Load, CPUUtil: e.State.Dyn.CPUUtil, MemAvail: e.State.Dyn.MemAvail, NetFlow: e.State.Dyn.NetFlow,
		NetRxBytesPerSec: 1e6, NetTxBytesPerSec: 3.75e6, Users: 2, PEs: e.State.Static.PEs}
	if !reflect.DeepEqual(n.Attrs, want) {
		t.Errorf("Attrs = %+v, want %+v", n.Attrs, want)
	}
	if n.Name != "n1" || n.Status != nodestate.StatusAlive || !n.Since.Equal(since) || !n.HasState || !n.Server ||
		n.ProbePort != 7949 || !n.Confined || !reflect.DeepEqual(n.Features, []string{"ib"}) {
		t.Errorf("identity and standing = %+v", n)
	}
	if n.RaftAddr != "[fe80::1]:7947" {
		t.Errorf("RaftAddr = %q, want [fe80::1]:7947", n.RaftAddr)
	}
	if !reflect.DeepEqual(n.Traffic, e.Traffic) || !reflect.DeepEqual(n.Net, row) || !reflect.DeepEqual(n.Probes, e.State.Probes) {
		t.Errorf("traffic %+v, row %+v, probes %+v: want the entry's and the row's", n.Traffic, n.Net, n.Probes)
	}
	if n.SampledAt != 4100 || n.NetWindowMs != 200 {
		t.Errorf("latest sample at %d over %d ms, want the gossiped 4100 over 200 ms", n.SampledAt, n.NetWindowMs)
	}
	if n.Coord == nil || n.Coord.Vec[0] != 100e-6 || n.Coord.Height != 10e-6 {
		t.Errorf("Coord = %+v, want the gossiped one in seconds", n.Coord)
	}
	if want := (probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 40, Since: time.UnixMilli(3000), At: time.UnixMilli(4000)}); n.Link != want {
		t.Errorf("Link = %+v, want %+v", n.Link, want)
	}
	// What the core cannot use reads as nothing: a coordinate of the
	// wrong dimension, a change it does not know.
	e.State.Coord = &nodestate.Coord{Vec: []float64{1}}
	e.State.Link = &nodestate.LinkState{Change: "sideways", Mbps: 40}
	if n := NodeOf(e, nil); n.Coord != nil || n.Link != (probeplan.LinkVerdict{}) || n.Net != nil {
		t.Errorf("bad coordinate and unknown change: Coord %+v, Link %+v, Net %+v; want none", n.Coord, n.Link, n.Net)
	}
}
