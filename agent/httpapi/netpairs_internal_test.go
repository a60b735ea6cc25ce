package httpapi

import (
	"fmt"
	"testing"

	"github.com/shoal-hpc/shoal/gossip"
)

// GET /v1/net puts the coordinate estimate next to the measured RTT, lists
// pairs that have only an estimate, and estimates nothing for a node
// without a coordinate or a dead one.
func TestNetPairsCoordinateEstimate(t *testing.T) {
	t.Parallel()
	at := func(x float64) *gossip.Coord {
		return &gossip.Coord{Vec: []float64{x, 0, 0, 0, 0, 0, 0, 0}, Error: 0.2, Height: 10}
	}
	var rows []gossip.NetRow
	entry := func(name string, st gossip.Status, c *gossip.Coord, net ...gossip.NetEntry) gossip.Entry {
		if len(net) > 0 {
			rows = append(rows, gossip.NetRow{Node: name, Cells: net})
		}
		return gossip.Entry{HasState: true, Status: st, State: gossip.NodeState{Name: name, Coord: c}}
	}
	nodes := []gossip.Entry{
		entry("a", gossip.StatusAlive, at(0), gossip.NetEntry{Peer: "b", RTT1: 900, RTT5: 950, RTTAt: 1}),
		entry("b", gossip.StatusAlive, at(480)),
		entry("c", gossip.StatusAlive, nil, gossip.NetEntry{Peer: "a", RTT1: 300, RTT5: 300, RTTAt: 1}),
		entry("d", gossip.StatusDead, at(100)),
	}
	got := map[string]string{}
	for _, p := range netPairs(nodes, rows) {
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
