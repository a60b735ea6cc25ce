package probe

import (
	"math"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func feed(tr *Tracker, from time.Time, every time.Duration, n int, f func(i int, at time.Time) RawSample) nodestate.Dynamic {
	var d nodestate.Dynamic
	for i := range n {
		at := from.Add(time.Duration(i) * every)
		s := f(i, at)
		s.At = at
		d = tr.Add(s)
	}
	return d
}

func TestTracker_FirstSample(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	d := tr.Add(RawSample{At: t0, Load1: 2, CPUUtil: 50, MemAvail: 1000, NetBytes: 1 << 40, Users: 3})
	want := nodestate.Means{Now: 2, M1: 2, M5: 2, M15: 2}
	if d.Load != want {
		t.Errorf("Load = %+v, want %+v", d.Load, want)
	}
	if d.NetFlow != (nodestate.Means{}) {
		t.Errorf("NetFlow = %+v, want zero: no rate from one counter reading", d.NetFlow)
	}
	if d.Users != 3 || d.SampledAt != t0.UnixMilli() {
		t.Errorf("Users/SampledAt = %d/%v, want 3/%d", d.Users, d.SampledAt, t0.UnixMilli())
	}
}

func TestTracker_Means(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		every time.Duration
		n     int
		load  func(i int) float64
		want  nodestate.Means
	}{
		{name: "constant", every: 3 * time.Second, n: 400, load: func(int) float64 { return 1.5 },
			want: nodestate.Means{Now: 1.5, M1: 1.5, M5: 1.5, M15: 1.5}},
		// 20 minutes at 1, then the last 2 minutes at 5 (samples every 3 s).
		{name: "recent step shows in M1 first", every: 3 * time.Second, n: 441,
			load: func(i int) float64 {
				if i > 400 {
					return 5
				}
				return 1
			},
			want: nodestate.Means{Now: 5, M1: 5, M5: 1 + 4*2.0/5, M15: 1 + 4*2.0/15}},
		// Young tracker: 30 s of history, all windows cover what there is.
		{name: "short history", every: 10 * time.Second, n: 4, load: func(i int) float64 { return float64(i) },
			want: nodestate.Means{Now: 3, M1: 2, M5: 2, M15: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := feed(NewTracker(), t0, tt.every, tt.n, func(i int, _ time.Time) RawSample {
				return RawSample{Load1: tt.load(i)}
			})
			got := d.Load
			if !approx(got.Now, tt.want.Now) || !approx(got.M1, tt.want.M1) || !approx(got.M5, tt.want.M5) || !approx(got.M15, tt.want.M15) {
				t.Errorf("Load = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A step change must reach M1 before M5 and M5 before M15.
func TestTracker_StepReachesShortWindowFirst(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	feed(tr, t0, 3*time.Second, 300, func(int, time.Time) RawSample { return RawSample{CPUUtil: 10} })
	start := t0.Add(300 * 3 * time.Second)
	for i := range 20 { // one minute of 90 %
		d := tr.Add(RawSample{At: start.Add(time.Duration(i) * 3 * time.Second), CPUUtil: 90})
		m := d.CPUUtil
		if !(m.M1 >= m.M5 && m.M5 >= m.M15 && m.M15 > 10) {
			t.Fatalf("after %d hot samples: %+v, want M1 >= M5 >= M15 > 10", i+1, m)
		}
	}
}

// Irregular sampling must not bias the mean: 10 s at 100 sampled once,
// then 50 s at 0 sampled every second, gives a 1-minute mean of 100*10/60.
func TestTracker_TimeWeighted(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	tr.Add(RawSample{At: t0, CPUUtil: 0})
	tr.Add(RawSample{At: t0.Add(10 * time.Second), CPUUtil: 100})
	var d nodestate.Dynamic
	for i := 1; i <= 50; i++ {
		d = tr.Add(RawSample{At: t0.Add(time.Duration(10+i) * time.Second), CPUUtil: 0})
	}
	if want := 100 * 10.0 / 60; !approx(d.CPUUtil.M1, want) {
		t.Errorf("M1 = %v, want %v", d.CPUUtil.M1, want)
	}
}

func TestTracker_NetFlow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		bytes []uint64 // one reading per second
		want  nodestate.Means
	}{
		{name: "steady 1000 B/s", bytes: []uint64{0, 1000, 2000, 3000}, want: nodestate.Means{Now: 1000, M1: 1000, M5: 1000, M15: 1000}},
		{name: "counter reset left out", bytes: []uint64{5000, 6000, 7000, 100, 1100},
			want: nodestate.Means{Now: 1000, M1: 1000, M5: 1000, M15: 1000}},
		{name: "reset as latest keeps last known rate", bytes: []uint64{0, 2000, 4000, 10},
			want: nodestate.Means{Now: 2000, M1: 2000, M5: 2000, M15: 2000}},
		{name: "reset right after first sample", bytes: []uint64{5000, 10},
			want: nodestate.Means{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := feed(NewTracker(), t0, time.Second, len(tt.bytes), func(i int, _ time.Time) RawSample {
				return RawSample{NetBytes: tt.bytes[i]}
			})
			if d.NetFlow != tt.want {
				t.Errorf("NetFlow = %+v, want %+v", d.NetFlow, tt.want)
			}
		})
	}
}

func TestTracker_ClockJumps(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	feed(tr, t0, time.Second, 10, func(int, time.Time) RawSample { return RawSample{Load1: 9} })
	// Same timestamp twice: the second replaces the first.
	d := tr.Add(RawSample{At: t0.Add(9 * time.Second), Load1: 1})
	if tr.Len() != 10 || d.Load.Now != 1 {
		t.Errorf("duplicate timestamp: len %d, %+v", tr.Len(), d.Load)
	}
	// Clock went backwards: history restarts.
	d = tr.Add(RawSample{At: t0.Add(-time.Hour), Load1: 4})
	if tr.Len() != 1 || d.Load != (nodestate.Means{Now: 4, M1: 4, M5: 4, M15: 4}) {
		t.Errorf("backwards clock: len %d, %+v", tr.Len(), d.Load)
	}
}

func TestTracker_BoundedMemory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		every   time.Duration
		n       int
		maxKeep int
		limit   int
	}{
		// An hour at 3 s keeps 15 minutes (300 intervals) plus the start.
		{name: "3s for an hour", every: 3 * time.Second, n: 1200, maxKeep: 301},
		// Far faster than intended: the hard cap holds (a small cap keeps
		// the test fast; maxSamples works the same way).
		{name: "10ms under a cap of 50", every: 10 * time.Millisecond, n: 5000, maxKeep: 50, limit: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker()
			if tt.limit > 0 {
				tr.limit = tt.limit
			}
			d := feed(tr, t0, tt.every, tt.n, func(int, time.Time) RawSample { return RawSample{Load1: 1} })
			if d.Load.M15 != 1 {
				t.Errorf("M15 = %v, want 1", d.Load.M15)
			}
			if tr.Len() > tt.maxKeep {
				t.Errorf("kept %d samples, want <= %d", tr.Len(), tt.maxKeep)
			}
			if cap(tr.pts) > 4*tt.maxKeep {
				t.Errorf("backing array grew to %d", cap(tr.pts))
			}
		})
	}
}

// TestTracker_Directions: a flow that starts sending at full rate shows
// in NetTxBytesPerSec from the next sample, while the means still remember the
// quiet minutes before it and NetRxBytesPerSec stays as it was.
func TestTracker_Directions(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	var rx, tx uint64
	d := feed(tr, t0, 3*time.Second, 100, func(i int, _ time.Time) RawSample {
		rx += 3000 // 1,000 B/s received all along
		if i == 99 {
			tx += 3 * 12_500_000 // 100 Mbit/s sent over the last interval
		}
		return RawSample{RxBytes: rx, TxBytes: tx, NetBytes: rx + tx}
	})
	if !approx(d.NetTxBytesPerSec, 12_500_000) || !approx(d.NetRxBytesPerSec, 1000) {
		t.Fatalf("NetRxBytesPerSec, NetTxBytesPerSec = %v, %v; want 1000, 12500000", d.NetRxBytesPerSec, d.NetTxBytesPerSec)
	}
	if d.NetFlow.M5 > 0.05*d.NetTxBytesPerSec {
		t.Fatalf("the 5-minute mean %v already follows the new flow: not what this test means to show", d.NetFlow.M5)
	}
}

// TestTracker_LeavesOutProbeBytes: the bytes of shoal's own bandwidth
// tests (the agent's counts in RawSample.Probe*) are not traffic: a 30
// Mbit/s flow with a 1 MiB test each way in the same 3 s reads 30 Mbit/s
// each way and in the flow, a test counted after its bytes crossed the
// counters (more than the interval moved) reads 0, not a negative rate,
// and a probe count that restarts is taken as no test.
func TestTracker_LeavesOutProbeBytes(t *testing.T) {
	t.Parallel()
	const flow = 30e6 / 8 * 3 // bytes of a 30 Mbit/s flow in 3 s
	t0 := time.Unix(1000, 0)
	var tr Tracker
	tr.limit = maxSamples
	var rx, tx, prx, ptx uint64
	add := func(i int, drx, dtx, dprx, dptx uint64) nodestate.Dynamic {
		rx, tx, prx, ptx = rx+drx, tx+dtx, prx+dprx, ptx+dptx
		return tr.Add(RawSample{At: t0.Add(time.Duration(i) * 3 * time.Second), NetBytes: rx + tx, RxBytes: rx, TxBytes: tx,
			ProbeRxBytes: prx, ProbeTxBytes: ptx})
	}
	add(0, 0, 0, 0, 0)
	d := add(1, flow+1<<20, flow+1<<20, 1<<20, 1<<20)
	if math.Abs(d.NetRxBytesPerSec*8/1e6-30) > 1e-9 || math.Abs(d.NetTxBytesPerSec*8/1e6-30) > 1e-9 || math.Abs(d.NetFlow.Now*8/1e6-60) > 1e-9 {
		t.Fatalf("flow plus a test: rx %.3f tx %.3f flow %.3f Mbit/s, want 30, 30, 60", d.NetRxBytesPerSec*8/1e6, d.NetTxBytesPerSec*8/1e6, d.NetFlow.Now*8/1e6)
	}
	d = add(2, 1000, 1000, 1<<20, 0)
	if d.NetRxBytesPerSec != 0 || d.NetTxBytesPerSec <= 0 {
		t.Fatalf("a test counted after its bytes: rx %v, tx %v; want rx 0 (not negative), tx the interval's", d.NetRxBytesPerSec, d.NetTxBytesPerSec)
	}
	prx, ptx = 0, 0 // the agent restarted its counts
	d = add(3, flow, flow, 0, 0)
	if math.Abs(d.NetRxBytesPerSec*8/1e6-30) > 1e-9 {
		t.Fatalf("after the probe count restarted: rx %.3f Mbit/s, want 30", d.NetRxBytesPerSec*8/1e6)
	}
}

// TestTracker_RecentRatesAreNow: a flow of 12.5 MB/s sent and 1 MB/s received
// ends half a second before a sample its end called for, a second after the
// previous sample. That sample's recent rates (what the traffic watch read
// over the last half second) are the node's traffic now, in NetRxBytesPerSec,
// NetTxBytesPerSec and NetFlow.Now, though the interval since the previous
// sample still averages half a second of the flow; the means still count
// every byte of it. An interval that held a bandwidth test keeps the
// interval's rates, since the recent ones cannot leave the test's bytes out.
func TestTracker_RecentRatesAreNow(t *testing.T) {
	t.Parallel()
	const sent, recv = 12_500_000, 1_000_000 // bytes/s while the flow ran
	for _, tc := range []struct {
		name           string
		probeBytes     uint64
		wantRx, wantTx float64
	}{
		{name: "no test", wantRx: 0, wantTx: 0},
		{name: "a test in the interval", probeBytes: 1000, wantRx: recv/2 - 1000, wantTx: sent / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker()
			var rx, tx uint64
			feed(tr, t0, 3*time.Second, 20, func(int, time.Time) RawSample {
				rx, tx = rx+3*recv, tx+3*sent
				return RawSample{RxBytes: rx, TxBytes: tx, NetBytes: rx + tx}
			})
			last := t0.Add(19 * 3 * time.Second)
			rx, tx = rx+recv/2, tx+sent/2 // the flow's last half second
			d := tr.Add(RawSample{At: last.Add(time.Second), RxBytes: rx, TxBytes: tx, NetBytes: rx + tx,
				ProbeRxBytes: tc.probeBytes, RecentSpan: 500 * time.Millisecond})
			if !approx(d.NetRxBytesPerSec, tc.wantRx) || !approx(d.NetTxBytesPerSec, tc.wantTx) {
				t.Fatalf("NetRxBytesPerSec, NetTxBytesPerSec = %v, %v; want %v, %v", d.NetRxBytesPerSec, d.NetTxBytesPerSec, tc.wantRx, tc.wantTx)
			}
			if !approx(d.NetFlow.Now, tc.wantRx+tc.wantTx) {
				t.Fatalf("NetFlow.Now = %v, want %v", d.NetFlow.Now, tc.wantRx+tc.wantTx)
			}
			// 57 s of the flow and the last second with half a second of
			// it: the 1-minute mean is the bytes moved over the minute.
			moved := float64(sent+recv)*(19*3+0.5) - float64(tc.probeBytes)
			if want := moved / 58; !approx(d.NetFlow.M1, want) {
				t.Fatalf("NetFlow.M1 = %v, want %v: the means must count the bytes moved", d.NetFlow.M1, want)
			}
			// The next regular sample, 3 s on and quiet, reads the quiet.
			d = tr.Add(RawSample{At: last.Add(4 * time.Second), RxBytes: rx, TxBytes: tx, NetBytes: rx + tx, ProbeRxBytes: tc.probeBytes})
			if d.NetRxBytesPerSec != 0 || d.NetTxBytesPerSec != 0 || d.NetFlow.Now != 0 {
				t.Fatalf("a quiet interval after: NetRxBytesPerSec %v NetTxBytesPerSec %v NetFlow.Now %v, want 0", d.NetRxBytesPerSec, d.NetTxBytesPerSec, d.NetFlow.Now)
			}
		})
	}
}

// TestTracker_TrafficWindow: a sample's rates say the window they cover.
// A regular sample's is the interval since the previous sample, one a
// shift called for the watch reading that saw it, and the regular sample
// after that the interval since the early one. The first sample has no
// rates and no window; rates kept over a counter reset reach back to the
// window they were read over; a clock that went back leaves none.
func TestTracker_TrafficWindow(t *testing.T) {
	t.Parallel()
	tr := NewTracker()
	var rx, tx uint64
	add := func(at time.Time, recent time.Duration) nodestate.Dynamic {
		rx, tx = rx+3e6, tx+1e6
		return tr.Add(RawSample{At: at, RxBytes: rx, TxBytes: tx, NetBytes: rx + tx, RecentRx: 5e6, RecentTx: 2e6, RecentSpan: recent})
	}
	for _, step := range []struct {
		name   string
		at     time.Duration
		recent time.Duration
		win    int64
	}{
		{"first sample", 0, 0, 0},
		{"regular", 3 * time.Second, 0, 3000},
		{"early, 0.3 s after", 3300 * time.Millisecond, 200 * time.Millisecond, 200},
		{"regular after the early one", 6 * time.Second, 0, 2700},
	} {
		d := add(t0.Add(step.at), step.recent)
		if d.NetWindowMs != step.win {
			t.Errorf("%s: window %d ms, want %d", step.name, d.NetWindowMs, step.win)
		}
		if step.recent > 0 && (d.NetRxBytesPerSec != 5e6 || d.NetTxBytesPerSec != 2e6) {
			t.Errorf("%s: rates %.0f/%.0f, want the watch reading's 5e6/2e6", step.name, d.NetRxBytesPerSec, d.NetTxBytesPerSec)
		}
	}
	// The counters restart: the rates of the 6 s sample stand, read over
	// the window from 3.3 s.
	d := tr.Add(RawSample{At: t0.Add(9 * time.Second)})
	if d.NetWindowMs != 5700 || d.NetRxBytesPerSec == 0 {
		t.Errorf("after a counter reset: window %d ms, rx %.0f; want 5700 ms and the rates before", d.NetWindowMs, d.NetRxBytesPerSec)
	}
	if d := add(t0.Add(time.Second), 0); d.NetWindowMs != 0 {
		t.Errorf("after the clock went back: window %d ms, want 0 (no rates yet)", d.NetWindowMs)
	}
}
