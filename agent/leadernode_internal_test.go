package agent

import (
	"reflect"
	"testing"

	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/nodestate"
)

// TestLeaderNodeCarriesTrafficAndTestTimes: what the leader stamps each
// cross-switch test with (leader/stamp.go) reaches it: every traffic
// step the gossip table kept, each node's in one shared array without
// overlap, and each direction's test time.
func TestLeaderNodeCarriesTrafficAndTestTimes(t *testing.T) {
	t.Parallel()
	all := make([]leader.TrafficPoint, 0, 3)
	all, n1 := appendTraffic(all, []nodestate.TrafficPoint{{At: 1000, Tx: 3.75e6}, {At: 4000, Rx: 1e6, Tx: 3.75e6}})
	all, none := appendTraffic(all, nil)
	_, n3 := appendTraffic(all, []nodestate.TrafficPoint{{At: 2000, Rx: 5}})
	want := []leader.TrafficPoint{{At: 1000, Tx: 3.75e6}, {At: 4000, Rx: 1e6, Tx: 3.75e6}}
	if !reflect.DeepEqual(n1, want) || none != nil || !reflect.DeepEqual(n3, []leader.TrafficPoint{{At: 2000, Rx: 5}}) {
		t.Fatalf("steps %+v, %+v, %+v; want %+v, nil, [{2000 5 0}]", n1, none, n3, want)
	}
	if _ = append(n1, leader.TrafficPoint{At: 9}); n3[0].At != 2000 {
		t.Fatal("appending to one node's steps wrote over the next node's")
	}
	cells := leaderCells([]nodestate.NetEntry{{Peer: "n2", BWOut: 48, BWIn: 43, BWOutAt: 10000, BWInAt: 10500}})
	if len(cells) != 1 || cells[0].BWOutAt != 10000 || cells[0].BWInAt != 10500 {
		t.Fatalf("cells = %+v, want the test times 10000 out, 10500 in", cells)
	}
}
