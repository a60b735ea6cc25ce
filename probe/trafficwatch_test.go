package probe

import (
	"testing"
	"time"
)

// TestTrafficWatch_ShiftsAndSteadyTraffic: a steady rate never calls for
// a sample; a flow that stops, starts, halves or doubles does, in either
// direction; a counter reset or a still clock decides nothing.
func TestTrafficWatch_ShiftsAndSteadyTraffic(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	const mb = 1_000_000 // bytes/s: 8 Mbit/s
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// published: 10 MB/s received, 2 MB/s sent, over the 3 s between the
	// two samples; then one watch reading 500 ms later at the given rates.
	check := func(rxRate, txRate float64) bool {
		var w TrafficWatch
		w.Sampled(at(0), 0, 0)
		w.Sampled(at(3000), 30*mb, 6*mb)
		return w.Check(at(3500), 30*mb+uint64(rxRate/2), 6*mb+uint64(txRate/2))
	}
	for _, tc := range []struct {
		name       string
		rx, tx     float64
		wantSample bool
	}{
		{"steady", 10 * mb, 2 * mb, false},
		{"a little less", 6 * mb, 1.5 * mb, false},
		{"received stopped", 0, 2 * mb, true},
		{"sent stopped", 10 * mb, 0, true},
		{"received doubled and more", 16 * mb, 2 * mb, true},
		{"sent up by less than the floor", 10 * mb, 2*mb + 100_000, false},
	} {
		if got := check(tc.rx, tc.tx); got != tc.wantSample {
			t.Errorf("%s: Check = %v, want %v", tc.name, got, tc.wantSample)
		}
	}

	var w TrafficWatch
	if w.Check(at(0), 5*mb, 5*mb) {
		t.Error("a reading before any sample called for one")
	}
	w.Sampled(at(0), 5*mb, 5*mb)
	if w.Check(at(500), 5*mb+50_000, 5*mb) {
		t.Error("chatter after the first sample (100 kB/s) called for a sample")
	}
	if !w.Check(at(1000), 6*mb, 5*mb) {
		t.Error("traffic after the first sample, which published no rate, did not call for a sample")
	}
	if w.Check(at(1500), 1*mb, 5*mb) {
		t.Error("a counter that went back (an interface gone) called for a sample")
	}
	if w.Check(at(1500), 9*mb, 5*mb) {
		t.Error("a reading at the same instant called for a sample")
	}
}

// TestTrafficWatch_MinGap: bursty traffic that shifts at every reading
// calls for a sample no more often than MinGap, with the regular samples
// every 3 s between; with a Burst of 2, at most one more over the run.
func TestTrafficWatch_MinGap(t *testing.T) {
	t.Parallel()
	for _, burst := range []int{0, 2} {
		t0 := time.Unix(1000, 0)
		w := TrafficWatch{MinGap: time.Second, Burst: burst}
		var rx uint64
		w.Sampled(t0, 0, 0)
		samples := 0
		for i := 1; i <= 40; i++ { // 10 s of readings every 250 ms, rate flipping 0 <-> 40 MB/s
			at := t0.Add(time.Duration(i) * 250 * time.Millisecond)
			if i%2 == 0 {
				rx += 10_000_000
			}
			if i%12 == 0 { // the regular sample
				w.Sampled(at, rx, 0)
				continue
			}
			if w.Check(at, rx, 0) {
				samples++
				w.SampledRecent(at, rx, 0)
			}
		}
		if most := 10 + max(burst-1, 0); samples == 0 || samples > most {
			t.Fatalf("burst %d: %d samples in 10 s of bursty traffic, want 1..%d (one a second, and the burst)", burst, samples, most)
		}
	}
}

// TestTrafficWatch_RampIsSpaced: a rate that keeps rising by half again
// at every reading shifts the same way each time; after the one
// continuation a shift gets, the credits space its samples like any
// other traffic's (at most Burst, one continuation and one a MinGap).
func TestTrafficWatch_RampIsSpaced(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	w := TrafficWatch{MinGap: time.Second, Burst: 2}
	w.Sampled(t0, 0, 0)
	var rx uint64
	rate, samples := 1_000_000.0, 0
	for i := 1; i <= 10; i++ { // 2 s of readings every 200 ms
		at := t0.Add(time.Duration(i) * 200 * time.Millisecond)
		rate *= 1.6
		rx += uint64(rate / 5)
		if w.Check(at, rx, 0) {
			samples++
			w.SampledRecent(at, rx, 0)
		}
	}
	if most := 2 + 1 + 2; samples > most {
		t.Fatalf("%d samples in 2 s of a ramp, want at most %d (the burst, one continuation, one a second)", samples, most)
	}
}

// TestTrafficWatch_BurstLetsAnEndThrough: a flow's rate wavers and a
// sample is called for; 0.4 s later the flow ends. With a Burst of 2 the
// quiet reading calls for a sample at once; without, MinGap holds it.
func TestTrafficWatch_BurstLetsAnEndThrough(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	const rate = 12_000_000
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		burst int
		want  bool
	}{{0, false}, {1, false}, {2, true}} {
		w := TrafficWatch{MinGap: time.Second, Burst: tc.burst}
		w.Sampled(at(0), 0, 0)
		w.Sampled(at(3000), 3*rate/2, 0) // published 6 MB/s: the flow began mid-interval
		if !w.Check(at(3200), 3*rate/2+rate/5, 0) {
			t.Fatalf("burst %d: the flow at twice the published rate did not call for a sample", tc.burst)
		}
		w.SampledRecent(at(3200), 3*rate/2+rate/5, 0) // published 12 MB/s
		w.Check(at(3400), 3*rate/2+2*rate/5, 0)
		if got := w.Check(at(3600), 3*rate/2+2*rate/5, 0); got != tc.want {
			t.Errorf("burst %d: the flow's end 0.4 s after a sample: Check = %v, want %v", tc.burst, got, tc.want)
		}
	}
}

// TestTrafficWatch_FlowEndWithinTwoReadings: a flow of 12 MB/s ends
// 150 ms into a 500 ms reading, which shows 30 % of it: a shift, and its
// sample publishes that. The next reading, quiet, continues the drop and
// calls for a sample though MinGap has not passed. And a regular sample
// taken just after a flow ended, which published the interval's average
// with the flow, does not hold back the quiet reading after it.
func TestTrafficWatch_FlowEndWithinTwoReadings(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	const rate = 12_000_000
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := TrafficWatch{MinGap: time.Second}
	w.Sampled(at(0), 0, 0)
	w.Sampled(at(3000), 3*rate, 0)
	w.Check(at(3500), 3.5*rate, 0)
	if !w.Check(at(4000), 3.5*rate+0.15*rate, 0) {
		t.Fatal("a reading with 30 % of the flow did not call for a sample")
	}
	w.SampledRecent(at(4000), 3.65*rate, 0)
	if !w.Check(at(4500), 3.65*rate, 0) {
		t.Fatal("the quiet reading after the flow's end, 0.5 s after a sample that still showed part of it, did not call for one")
	}
	w.SampledRecent(at(4500), 3.65*rate, 0)
	if w.Check(at(5000), 3.65*rate, 0) {
		t.Fatal("quiet after a sample that published the quiet called for another")
	}

	// A regular sample 0.2 s after a flow's end: MinGap counts from the
	// flow's start, the latest sample the watch called for, 1.7 s before
	// the quiet reading, not from the regular sample.
	var v TrafficWatch
	v.MinGap = time.Second
	v.Sampled(at(0), 0, 0)
	v.Check(at(500), 0.5*rate, 0)
	v.Check(at(1000), 1*rate, 0)
	v.SampledRecent(at(1000), 1*rate, 0) // the flow's start
	v.Check(at(1500), 1.5*rate, 0)
	v.Check(at(2000), 2*rate, 0)
	v.Sampled(at(2200), 2*rate, 0) // ended at 2000: published 10 MB/s
	if !v.Check(at(2700), 2*rate, 0) {
		t.Fatal("the quiet reading 0.5 s after a regular sample that averaged in a flow did not call for a sample")
	}
}

// TestTrafficWatch_RecentAndSampledRecent: Recent is the rate of the
// latest reading, unknown after a sample or a reading that told nothing;
// once a sample published that rate (SampledRecent), a reading at the
// same rate is no shift, though the rate between the latest two samples
// still averages the flow that stopped.
func TestTrafficWatch_RecentAndSampledRecent(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	const mb = 1_000_000
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := TrafficWatch{MinGap: time.Second}
	w.Sampled(at(0), 0, 0)
	w.Sampled(at(3000), 30*mb, 6*mb) // 10 MB/s received, 2 sent
	if _, _, span := w.Recent(); span != 0 {
		t.Fatalf("Recent after a sample: span %v, want 0", span)
	}
	w.Check(at(3500), 35*mb, 7*mb)
	if rx, tx, span := w.Recent(); rx != 10*mb || tx != 2*mb || span != 500*time.Millisecond {
		t.Fatalf("Recent = %v, %v over %v; want 10 MB/s, 2 MB/s over 500ms", rx, tx, span)
	}
	w.Check(at(3500), 36*mb, 7*mb)
	if _, _, span := w.Recent(); span != 0 {
		t.Fatalf("a reading at the same instant left a recent rate over %v", span)
	}
	// The flow stops: the reading that shows it calls for a sample.
	w.Check(at(4000), 36*mb, 7*mb)
	if !w.Check(at(4500), 36*mb, 7*mb) {
		t.Fatal("a stopped flow did not call for a sample")
	}
	w.SampledRecent(at(4500), 36*mb, 7*mb) // published 0, the rate of the reading
	if w.Check(at(5000), 36*mb, 7*mb) || w.Check(at(5500), 36*mb, 7*mb) || w.Check(at(6000), 36*mb, 7*mb) {
		t.Fatal("quiet after a sample that published the quiet called for another sample")
	}
	if !w.Check(at(6500), 41*mb, 7*mb) {
		t.Fatal("a flow that starts again after a recent sample did not call for one")
	}
}

// TestTrafficWatch_MinSpan: a reading 20 ms after the one before, which
// caught a burst of a steady flow's packets, is left out rather than
// called a shift; the next reading covers both and reads the flow's rate.
func TestTrafficWatch_MinSpan(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	const rate = 12_000_000
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := TrafficWatch{MinGap: time.Second, MinSpan: 100 * time.Millisecond}
	w.Sampled(at(0), 0, 0)
	w.Sampled(at(3000), 3*rate, 0)
	w.Check(at(3200), 3.2*rate, 0)
	if w.Check(at(3220), 3.2*rate+rate/2/10, 0) { // 20 ms at 30 MB/s
		t.Fatal("a 20 ms reading of a burst called for a sample")
	}
	if w.Check(at(3400), 3.4*rate, 0) {
		t.Fatal("the steady flow called for a sample")
	}
	if rx, _, span := w.Recent(); span != 200*time.Millisecond || !approxRate(rx, rate) {
		t.Fatalf("Recent = %v over %v, want %v over 200ms: the reading left out belongs to the next", rx, span, float64(rate))
	}
}

func approxRate(a, b float64) bool { return a > 0.999*b && a < 1.001*b }
