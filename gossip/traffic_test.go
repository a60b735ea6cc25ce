package gossip

import (
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

// TestTrafficSteps: the table keeps a node's traffic as the samples at
// which it changed: the first sample (no rates yet, idle) takes the
// second's figures, a steady flow is one point however many samples
// repeat it, sampling noise is no change, a new level is, and the oldest
// points go beyond maxTrafficPoints. A copy taken earlier does not change
// when later states merge.
func TestTrafficSteps(t *testing.T) {
	t.Parallel()
	tb := NewTable("self")
	merge := func(seq uint64, at int64, rx, tx float64) {
		t.Helper()
		s := nodestate.NodeState{Name: "n1", Seq: seq, Dyn: nodestate.Dynamic{SampledAt: at, NetRxBytesPerSec: rx, NetTxBytesPerSec: tx}}
		if !tb.Merge(s, true) {
			t.Fatalf("state %d not merged", seq)
		}
	}
	ats := func() []int64 {
		e, _ := tb.Get("n1")
		var out []int64
		for _, p := range e.Traffic {
			out = append(out, p.At)
		}
		return out
	}
	merge(1, 1000, 0, 0)      // the first sample: no rates yet
	merge(2, 4000, 0, 3.75e6) // a 30 Mbit/s flow, running since the start
	if e, _ := tb.Get("n1"); len(e.Traffic) != 1 || e.Traffic[0] != (nodestate.TrafficPoint{At: 1000, Tx: 3.75e6}) {
		t.Fatalf("after the second sample: %+v, want the flow from the first sample on", e.Traffic)
	}
	merge(3, 7000, 0, 3.8e6)       // the same flow
	merge(4, 10000, 0, 3.75e6+3e5) // sampling noise: no change
	merge(5, 11000, 0, 0)          // the flow ends: a step (not the first sample any more)
	merge(6, 12000, 0, 3.75e6)     // and starts again
	if got := ats(); !slices.Equal(got, []int64{1000, 11000, 12000}) {
		t.Fatalf("steps at %v, want [1000 11000 12000]", got)
	}
	before, _ := tb.Get("n1")
	merge(7, 13000, 6e6, 3.75e6) // it starts receiving
	if got := ats(); !slices.Equal(got, []int64{1000, 11000, 12000, 13000}) {
		t.Fatalf("steps at %v, want [1000 11000 12000 13000]", got)
	}
	if len(before.Traffic) != 3 || before.Traffic[2].Tx != 3.75e6 {
		t.Fatalf("an earlier copy changed: %+v", before.Traffic)
	}
	for i := range 2 * maxTrafficPoints {
		merge(uint64(8+i), int64(16000+3000*i), float64(i%2)*1e7, 0)
	}
	got := ats()
	if len(got) != maxTrafficPoints || got[len(got)-1] != int64(16000+3000*(2*maxTrafficPoints-1)) {
		t.Fatalf("%d steps ending at %d, want the newest %d", len(got), got[len(got)-1], maxTrafficPoints)
	}
}
