package probes

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
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
	r.addBW("n2", t0, dirReading{941.26, 0}, dirReading{})
	r.addBW("n2", t0.Add(time.Second), dirReading{500.04, 0}, dirReading{})
	r.addBW("n3", t0, dirReading{math.Inf(1), 0}, dirReading{math.NaN(), 0}) // dropped
	r.addBW("n3", t0, dirReading{}, dirReading{})                            // dropped
	r.addRTT("", t0, time.Millisecond)
	r.addRTT("n4", t0, -time.Millisecond)
	got, changed := r.take(t0.Add(2*time.Second), all)
	want := []nodestate.NetEntry{{Peer: "n2", RTT1us: 183, RTT5us: 183, RTTAt: t0.UnixMilli(), AvailMbps: 500, PeakMbps: 941.3, BWAt: t0.Add(time.Second).UnixMilli(),
		OutMbps: 500, PeakOutMbps: 941.3, OutAt: t0.Add(time.Second).UnixMilli()}}
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
	r.addBW("n2", t0, dirReading{940, 0}, dirReading{9.5, 0}) // out fast, in shaped to 10 Mbit/s
	got, _ := r.take(t0, all)
	want := nodestate.NetEntry{Peer: "n2", AvailMbps: 9.5, PeakMbps: 940, BWAt: t0.UnixMilli(),
		OutMbps: 940, PeakOutMbps: 940, OutAt: t0.UnixMilli(), InMbps: 9.5, PeakInMbps: 9.5, InAt: t0.UnixMilli()}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("two-way test: %+v; want %+v", got, want)
	}
	t1 := t0.Add(time.Minute)
	r.addBW("n2", t1, dirReading{}, dirReading{20, 0})
	got, _ = r.take(t1, all)
	want.AvailMbps, want.BWAt, want.InMbps, want.PeakInMbps, want.InAt = 20, t1.UnixMilli(), 20, 20, t1.UnixMilli()
	if len(got) != 1 || got[0] != want {
		t.Fatalf("after an inbound-only test: %+v; want %+v", got, want)
	}
}

// TestNetRow_Carried: what the node's link carried during a test travels
// with that direction's reading; a later test of the same direction
// replaces it (unread: 0, never the previous test's figure), a test of
// the other direction leaves it, and a figure below the reading (counters
// that went wrong) is dropped, not published as a link fuller than full.
func TestNetRow_Carried(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_763_790_000_000)
	all := func(string) bool { return true }
	r := newNetRow()
	r.addBW("n2", t0, dirReading{44.04, 98.96}, dirReading{95, 96.2})
	got, _ := r.take(t0, all)
	if len(got) != 1 || got[0].CarriedOutMbps != 99 || got[0].CarriedInMbps != 96.2 || got[0].OutMbps != 44 {
		t.Fatalf("two-way test under a flow: %+v; want out 44 carried 99, in carried 96.2", got)
	}
	r.addBW("n2", t0.Add(time.Minute), dirReading{}, dirReading{90, 0})
	got, _ = r.take(t0, all)
	if got[0].CarriedOutMbps != 99 || got[0].CarriedInMbps != 0 {
		t.Fatalf("after an inbound test with no counters: carried out %v in %v; want 99 and 0", got[0].CarriedOutMbps, got[0].CarriedInMbps)
	}
	r.addBW("n2", t0.Add(2*time.Minute), dirReading{50, 20}, dirReading{})
	got, _ = r.take(t0, all)
	if got[0].CarriedOutMbps != 0 || got[0].OutMbps != 50 {
		t.Fatalf("carried below the reading: %+v; want the reading kept and carried 0", got[0])
	}
}

// TestNetRow_LatestTest: a link check is read against the pair's latest
// figures and when they were measured, the older of the two ways', so
// that a check agreeing with a pair tested since the node's link changed
// is told apart (probeplan.JudgeLink).
func TestNetRow_LatestTest(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_763_790_000_000)
	r := newNetRow()
	if out, in, at := r.latestTest("n2"); out != 0 || in != 0 || !at.IsZero() {
		t.Fatalf("never tested: %v %v %v, want nothing", out, in, at)
	}
	r.addBW("n2", t0, dirReading{}, dirReading{95, 0})
	if out, in, at := r.latestTest("n2"); out != 0 || in != 95 || !at.Equal(t0) {
		t.Fatalf("one way tested: %v %v %v, want 0 95 %v", out, in, at, t0)
	}
	t1 := t0.Add(time.Minute)
	r.addBW("n2", t1, dirReading{6.5, 0}, dirReading{})
	if out, in, at := r.latestTest("n2"); out != 6.5 || in != 95 || !at.Equal(t0) {
		t.Fatalf("out tested again: %v %v %v, want 6.5 95 and the older way's %v", out, in, at, t0)
	}
	r.addBW("n2", t1.Add(time.Second), dirReading{7, 0}, dirReading{6.9, 0})
	if _, _, at := r.latestTest("n2"); !at.Equal(t1.Add(time.Second)) {
		t.Fatalf("both ways tested again: at %v, want %v", at, t1.Add(time.Second))
	}
}
