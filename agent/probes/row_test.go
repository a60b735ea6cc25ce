package probes

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
)

// TestNetRow: measurements become gossip cells rounded to the microsecond
// and the 0.1 Mbit/s, the peak is kept, bad readings are dropped, a take
// without news reports no change, and a peer gossip forgot is forgotten.
func TestNetRow(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_763_790_000_000)
	all := func(string) bool { return true }
	r := newNetRow()
	if _, changed := r.take(t0, all); changed {
		t.Fatal("an empty row reported a change")
	}
	r.addRTT("n2", t0, 183_400*time.Nanosecond)
	r.addBW("n2", t0, 941.26)
	r.addBW("n2", t0.Add(time.Second), 500.04)
	r.addBW("n3", t0, math.Inf(1)) // dropped
	r.addBW("n3", t0, 0)           // dropped
	r.addRTT("", t0, time.Millisecond)
	r.addRTT("n4", t0, -time.Millisecond)
	got, changed := r.take(t0.Add(2*time.Second), all)
	want := []gossip.NetEntry{{Peer: "n2", RTT1: 183, RTT5: 183, RTTAt: t0.UnixMilli(), BW: 500, Peak: 941.3, BWAt: t0.Add(time.Second).UnixMilli()}}
	if !changed || !slices.Equal(got, want) {
		t.Fatalf("take = %+v, %v; want %+v, true", got, changed, want)
	}
	if _, changed := r.take(t0.Add(3*time.Second), all); changed {
		t.Fatal("a second take without news reported a change")
	}
	r.addRTT("n5", t0, time.Millisecond)
	got, changed = r.take(t0.Add(4*time.Second), func(p string) bool { return p != "n2" })
	if !changed || len(got) != 1 || got[0].Peer != "n5" {
		t.Fatalf("after gossip forgot n2: take = %+v, %v; want only n5", got, changed)
	}
}
