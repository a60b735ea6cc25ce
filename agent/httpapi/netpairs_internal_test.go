package httpapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// GET /v1/net puts the coordinate estimate next to the measured RTT, lists
// pairs that have only an estimate, and estimates nothing for a node
// without a coordinate or a dead one.
func TestNetPairsCoordinateEstimate(t *testing.T) {
	t.Parallel()
	at := func(x float64) *nodestate.Coord {
		return &nodestate.Coord{Vec: []float64{x, 0, 0, 0, 0, 0, 0, 0}, Error: 0.2, Height: 10}
	}
	var rows []nodestate.NetRow
	entry := func(name string, st nodestate.Status, c *nodestate.Coord, net ...nodestate.NetEntry) nodestate.Entry {
		if len(net) > 0 {
			rows = append(rows, nodestate.NetRow{Node: name, Cells: net})
		}
		return nodestate.Entry{HasState: true, Status: st, State: nodestate.NodeState{Name: name, Coord: c}}
	}
	nodes := []nodestate.Entry{
		entry("a", nodestate.StatusAlive, at(0), nodestate.NetEntry{Peer: "b", RTT1us: 900, RTT5us: 950, RTTAt: 1}),
		entry("b", nodestate.StatusAlive, at(480)),
		entry("c", nodestate.StatusAlive, nil, nodestate.NetEntry{Peer: "a", RTT1us: 300, RTT5us: 300, RTTAt: 1}),
		entry("d", nodestate.StatusDead, at(100)),
	}
	got := map[string]string{}
	for _, p := range netPairs(nodes, rows, time.UnixMilli(1)) {
		s := ""
		if p.RTTms != nil {
			s += fmt.Sprintf("rtt=%.3f ", *p.RTTms)
		}
		if p.RTTEstms != nil {
			s += fmt.Sprintf("est=%.3f", *p.RTTEstms)
		}
		got[p.From+">"+p.To] = s
	}
	// 480 µs apart plus two 10 µs heights: 0.5 ms.
	want := map[string]string{
		"a>b": "rtt=0.900 est=0.500",
		"b>a": "est=0.500",
		"c>a": "rtt=0.300 ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pairs:\n got %v\nwant %v", got, want)
	}
}

// GET /v1/net gives each bandwidth direction with its own age, the RTT's
// age and the estimate's (the older coordinate's state); a direction
// never measured is left out, and a timestamp ahead of this clock is 0
// seconds old, not negative.
func TestNetPairsDirectionsAndAges(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_000_000)
	co := &nodestate.Coord{Vec: make([]float64, 8), Height: 10}
	nodes := []nodestate.Entry{
		{HasState: true, Status: nodestate.StatusAlive, State: nodestate.NodeState{Name: "a", Coord: co,
			Dyn: nodestate.Dynamic{SampledAt: 997_000}}},
		{HasState: true, Status: nodestate.StatusAlive, State: nodestate.NodeState{Name: "b", Coord: co,
			Dyn: nodestate.Dynamic{SampledAt: 988_000}}},
	}
	rows := []nodestate.NetRow{{Node: "a", Cells: []nodestate.NetEntry{{Peer: "b", AvailMbps: 9.5, PeakMbps: 940, BWAt: 940_000, RTT1us: 200, RTTAt: 999_500,
		OutMbps: 930, PeakOutMbps: 940, OutAt: 940_000, InMbps: 9.5, PeakInMbps: 9.8, InAt: 940_000},
		{Peer: "c", AvailMbps: 50, PeakMbps: 50, BWAt: 1_002_000, InMbps: 50, PeakInMbps: 50, InAt: 1_002_000}}}}
	got := map[string]string{}
	f := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(*v)
	}
	for _, p := range netPairs(nodes, rows, now) {
		got[p.From+">"+p.To] = fmt.Sprintf("out %s/%s age %s, in %s/%s age %s, rtt age %s, est age %s",
			f(p.BWOutMbps), f(p.PeakOutMbps), f(p.BWOutAgeS), f(p.BWInMbps), f(p.PeakInMbps), f(p.BWInAgeS),
			f(p.RTTAgeS), f(p.RTTEstAgeS))
	}
	want := map[string]string{
		"a>b": "out 930/940 age 60, in 9.5/9.8 age 60, rtt age 0.5, est age 12",
		"a>c": "out -/- age -, in 50/50 age 0, rtt age -, est age -",
		"b>a": "out -/- age -, in -/- age -, rtt age -, est age 12",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pairs:\n got %v\nwant %v", got, want)
	}
}
