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
	r.addBW("n2", t0, 941.26, 0)
	r.addBW("n2", t0.Add(time.Second), 500.04, 0)
	r.addBW("n3", t0, math.Inf(1), math.NaN()) // dropped
	r.addBW("n3", t0, 0, 0)                    // dropped
	r.addRTT("", t0, time.Millisecond)
	r.addRTT("n4", t0, -time.Millisecond)
	got, changed := r.take(t0.Add(2*time.Second), all)
	want := []gossip.NetEntry{{Peer: "n2", RTT1: 183, RTT5: 183, RTTAt: t0.UnixMilli(), BW: 500, Peak: 941.3, BWAt: t0.Add(time.Second).UnixMilli(),
		BWOut: 500, PeakOut: 941.3, BWOutAt: t0.Add(time.Second).UnixMilli()}}
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

// TestNetRow_Directions: a two-way test fills both directions; the
// undirected BW is the worse direction, Peak the faster one, and a later
// one-way test moves only its own direction and the age of that one.
func TestNetRow_Directions(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_763_790_000_000)
	all := func(string) bool { return true }
	r := newNetRow()
	r.addBW("n2", t0, 940, 9.5) // out fast, in shaped to 10 Mbit/s
	got, _ := r.take(t0, all)
	want := gossip.NetEntry{Peer: "n2", BW: 9.5, Peak: 940, BWAt: t0.UnixMilli(),
		BWOut: 940, PeakOut: 940, BWOutAt: t0.UnixMilli(), BWIn: 9.5, PeakIn: 9.5, BWInAt: t0.UnixMilli()}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("two-way test: %+v; want %+v", got, want)
	}
	t1 := t0.Add(time.Minute)
	r.addBW("n2", t1, 0, 20)
	got, _ = r.take(t1, all)
	want.BW, want.BWAt, want.BWIn, want.PeakIn, want.BWInAt = 20, t1.UnixMilli(), 20, 20, t1.UnixMilli()
	if len(got) != 1 || got[0] != want {
		t.Fatalf("after an inbound-only test: %+v; want %+v", got, want)
	}
}
