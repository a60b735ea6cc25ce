package leader

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// sw2Of4 is queue12's sw2 after its first cycle: n05..n08 on one switch,
// every pair tested both ways at 105 Mbit/s on quiet ends, but n08 -> n05
// at 41.6 with neither end counting anything besides the test.
func sw2Of4(t *testing.T) (*world, []string) {
	names := []string{"n05", "n06", "n07", "n08"}
	w := newWorld(t, names...)
	at := t0.UnixMilli()
	for i := range w.nodes {
		w.nodes[i].Attrs.Switch = "sw2"
		for _, p := range names {
			if p == names[i] {
				continue
			}
			w.nodes[i].Net = append(w.nodes[i].Net, nodestate.NetEntry{Peer: p, AvailMbps: 105, PeakMbps: 105, BWAt: at,
				OutMbps: 105, InMbps: 105, PeakOutMbps: 105, PeakInMbps: 105, OutAt: at, InAt: at, CarriedOutMbps: 105.5, CarriedInMbps: 105.4})
		}
	}
	w.nodes[0].Net[2].InMbps, w.nodes[0].Net[2].PeakInMbps, w.nodes[0].Net[2].CarriedInMbps = 41.6, 41.6, 41.6    // n05's cell for n08
	w.nodes[3].Net[0].OutMbps, w.nodes[3].Net[0].PeakOutMbps, w.nodes[3].Net[0].CarriedOutMbps = 41.6, 41.6, 41.6 // n08's cell for n05
	return w, names
}

// TestProbes_RetestsAQuietOutlier: a test between two nodes of one switch
// that read under half of both nodes' other tests there, with no traffic
// beside it at either end, is tested again in the next catch-up, not left
// to the next full cycle; not when a node's link checks read its link
// slower (a link that dropped), and not when an end counted traffic
// beside the test (that is contendedPairs' to judge).
func TestProbes_RetestsAQuietOutlier(t *testing.T) {
	t.Parallel()
	w, names := sw2Of4(t)
	pair := probeplan.NewPair("n05", "n08")
	if got := outlierPairs(w.st, w.nodes, names); len(got) != 1 || got[0].Pair != pair || got[0].Mbps != 41.6 {
		t.Fatalf("outlierPairs = %v, want %v at 41.6", got, pair)
	}
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Test{{{From: "n08", To: "n05"}}}, RoundLen: 6 * time.Second})
	w.now = t0.Add(time.Minute)
	b := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}, Tries: map[probeplan.Pair]int{}, Counted: 1}
	cmds, _ := scheduleCycle(w.view(), b)
	wantCatchUpOf(t, cmds, pair)

	w.nodes[3].Link = probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 40, Since: t0, At: t0}
	if got := outlierPairs(w.st, w.nodes, names); len(got) != 0 {
		t.Fatalf("n08's link checks read it slower: outlierPairs = %v, want none", got)
	}
	w.nodes[3].Link = probeplan.LinkVerdict{}
	w.nodes[0].Net[2].CarriedInMbps = 100 // n05 received 58 besides the test
	if got := outlierPairs(w.st, w.nodes, names); len(got) != 0 {
		t.Fatalf("beside traffic at n05: outlierPairs = %v, want none", got)
	}
	w.nodes[0].Net[2].CarriedInMbps = 41.6
	w.nodes[3].Net[0].CarriedOutMbps = 0 // n08 did not count: n05's count stands
	if got := outlierPairs(w.st, w.nodes, names); len(got) != 1 {
		t.Fatalf("n08 without counts: outlierPairs = %v, want %v", got, pair)
	}
	for i := range w.nodes {
		w.nodes[i].Attrs.Switch = ""
	}
	if got := outlierPairs(w.st, w.nodes, names); len(got) != 0 {
		t.Fatalf("switches not known: outlierPairs = %v, want none", got)
	}
}
