package agent

import (
	"reflect"
	"testing"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/leader"
)

// TestLeaderNodeCarriesTrafficAndTestTimes: what the leader stamps each
// cross-switch test with (leader/stamp.go) reaches it: every traffic
// step the gossip table kept, and each direction's test time.
func TestLeaderNodeCarriesTrafficAndTestTimes(t *testing.T) {
	t.Parallel()
	e := gossip.Entry{State: gossip.NodeState{Name: "n1"}, HasState: true,
		Traffic: []gossip.TrafficPoint{{At: 1000, Tx: 3.75e6}, {At: 4000, Rx: 1e6, Tx: 3.75e6}}}
	n := leaderNode(e)
	want := []leader.TrafficPoint{{At: 1000, Tx: 3.75e6}, {At: 4000, Rx: 1e6, Tx: 3.75e6}}
	if !reflect.DeepEqual(n.Traffic, want) {
		t.Fatalf("Traffic = %+v, want %+v", n.Traffic, want)
	}
	cells := leaderCells([]gossip.NetEntry{{Peer: "n2", BWOut: 48, BWIn: 43, BWOutAt: 10000, BWInAt: 10500}})
	if len(cells) != 1 || cells[0].BWOutAt != 10000 || cells[0].BWInAt != 10500 {
		t.Fatalf("cells = %+v, want the test times 10000 out, 10500 in", cells)
	}
}
