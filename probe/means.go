package probe

import (
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// The averaging windows, and how long the Tracker keeps samples.
const (
	window1  = time.Minute
	window5  = 5 * time.Minute
	window15 = 15 * time.Minute

	// maxSamples bounds memory even if a caller samples far faster than
	// intended: 15 minutes at 10 samples per second. Past it the oldest
	// samples go and the 15-minute mean covers less time.
	maxSamples = int(window15/(100*time.Millisecond)) + 2
)

// point is a stored sample. flow is the byte rate over the interval that
// ends at this sample; flowOK is false when it is unknown (first sample,
// counter reset).
type point struct {
	at             time.Time
	load, cpu, mem float64
	flow           float64
	flowOK         bool
	netBytes       uint64
	rxBytes        uint64
	txBytes        uint64
	probeRx        uint64
	probeTx        uint64
}

// Tracker turns RawSamples into running means. It is pure: all time comes
// from the samples' own timestamps, so tests drive it with synthetic
// clocks. It is not safe for concurrent use; one sampling loop owns it.
//
// The means are time-weighted: a sample's value stands for the interval
// since the previous sample (a CPU percentage and a byte rate are
// measured over exactly that interval; a load or memory reading is taken
// as representative of it). A window's mean is the integral of that step
// function over the window divided by the time it covers, so irregular
// sampling (a slow tick, a missed one) does not skew the mean toward the
// period where samples happened to be dense. Until a window is full, its
// mean covers the time observed so far; with a single sample all means
// equal that sample, and the flow means are 0 until there are two.
//
// Samples older than 15 minutes are dropped, except the last one before
// the window, which marks where the oldest interval begins.
//
// Add costs O(samples held): about 300 at the default 3 s interval.
type Tracker struct {
	pts      []point
	limit    int     // maxSamples; smaller in tests
	lastFlow float64 // most recent known rate, reported as NetFlow.Now
	// lastRx, lastTx are the most recent known rates per direction, and
	// rateFrom the start of the window they cover (zero: none yet); the
	// window ends at the sample that set them.
	lastRx, lastTx float64
	rateFrom       time.Time
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker { return &Tracker{limit: maxSamples} }

// Add records s and returns the node's dynamic state as of s.At (its
// SampledAt is s.At in Unix milliseconds).
//
// A sample older than the previous one means the clock went backwards;
// windows measured on two clocks are meaningless, so the history restarts
// from s. A sample with the same timestamp as the previous one replaces it.
// NetBytes lower than the previous reading means a counter reset (an
// interface went away, a driver reloaded): that interval's rate is unknown
// and left out of the flow means rather than guessed.
func (t *Tracker) Add(s RawSample) nodestate.Dynamic {
	p := point{
		at:       s.At,
		load:     s.Load1,
		cpu:      s.CPUUtil,
		mem:      float64(s.MemAvail),
		netBytes: s.NetBytes,
		rxBytes:  s.RxBytes,
		txBytes:  s.TxBytes,
		probeRx:  s.ProbeRxBytes,
		probeTx:  s.ProbeTxBytes,
	}
	if n := len(t.pts); n > 0 {
		last := t.pts[n-1]
		switch {
		case s.At.Before(last.at):
			t.pts, t.lastFlow, t.lastRx, t.lastTx, t.rateFrom = t.pts[:0], 0, 0, 0, time.Time{}
		case s.At.Equal(last.at):
			t.pts = t.pts[:n-1]
		}
	}
	if n := len(t.pts); n > 0 {
		prev := t.pts[n-1]
		// The interval's own bandwidth tests are left out. They are
		// counted when a test ends, the interface counters as the bytes
		// go, so a test across two samples can take more from this
		// interval than its counters moved: the rate is then 0, not
		// negative.
		prx, ptx := since(p.probeRx, prev.probeRx), since(p.probeTx, prev.probeTx)
		if p.netBytes >= prev.netBytes {
			dt := p.at.Sub(prev.at).Seconds()
			p.flow, p.flowOK = max(0, float64(p.netBytes-prev.netBytes)-prx-ptx)/dt, true
			t.lastFlow = p.flow
		}
		if p.rxBytes >= prev.rxBytes && p.txBytes >= prev.txBytes {
			dt := p.at.Sub(prev.at).Seconds()
			t.lastRx, t.lastTx = max(0, float64(p.rxBytes-prev.rxBytes)-prx)/dt, max(0, float64(p.txBytes-prev.txBytes)-ptx)/dt
			t.rateFrom = prev.at
		}
		// A sample a shift called for publishes the rates just before it
		// as the "now" values; the flow means keep the interval's rate,
		// so they still count every byte moved. The recent rates cannot
		// leave a bandwidth test's bytes out (they are counted per
		// interval, when the test ends), so an interval with a test
		// keeps the interval's rates.
		if s.RecentSpan > 0 && prx == 0 && ptx == 0 {
			t.lastRx, t.lastTx = s.RecentRx, s.RecentTx
			t.lastFlow = s.RecentRx + s.RecentTx
			t.rateFrom = s.At.Add(-s.RecentSpan)
		}
	}
	t.pts = append(t.pts, p)
	t.trim(s.At)

	d := nodestate.Dynamic{Users: s.Users, SampledAt: s.At.UnixMilli(), NetRxBytesPerSec: t.lastRx, NetTxBytesPerSec: t.lastTx}
	if !t.rateFrom.IsZero() {
		// Rates kept over a counter reset are older than the interval:
		// their window is published as reaching to this sample, which
		// only widens it. A window under a millisecond (none the watch
		// takes) is still a known one.
		d.NetWindowMs = max(1, d.SampledAt-t.rateFrom.UnixMilli())
	}
	always := func(v func(point) float64) func(point) (float64, bool) {
		return func(p point) (float64, bool) { return v(p), true }
	}
	d.Load = t.means(p.load, always(func(p point) float64 { return p.load }))
	d.CPUUtil = t.means(p.cpu, always(func(p point) float64 { return p.cpu }))
	d.MemAvail = t.means(p.mem, always(func(p point) float64 { return p.mem }))
	d.NetFlow = t.means(t.lastFlow, func(p point) (float64, bool) { return p.flow, p.flowOK })
	return d
}

// since is how far a cumulative count moved from prev to cur; 0 when it
// went back (the count restarted).
func since(cur, prev uint64) float64 {
	if cur < prev {
		return 0
	}
	return float64(cur - prev)
}

// Len reports how many samples the Tracker holds (for tests and metrics).
func (t *Tracker) Len() int { return len(t.pts) }

// trim drops samples that no longer touch the 15-minute window. It copies
// down rather than reslicing so the backing array does not grow forever.
func (t *Tracker) trim(now time.Time) {
	start := now.Add(-window15)
	drop := 0
	for drop+1 < len(t.pts) && !t.pts[drop+1].at.After(start) {
		drop++
	}
	limit := t.limit
	if limit < 2 {
		limit = maxSamples // zero Tracker
	}
	if over := len(t.pts) - limit; over > drop {
		drop = over
	}
	if drop > 0 {
		t.pts = t.pts[:copy(t.pts, t.pts[drop:])]
	}
}

// means integrates the step function val over the three windows ending at
// the newest sample. Intervals where ok is false are skipped entirely
// (neither value nor duration counts). A window with no known interval
// (a single sample, or only unknown rates) reports now, the best
// estimate there is.
func (t *Tracker) means(now float64, val func(point) (float64, bool)) nodestate.Means {
	windows := [3]time.Duration{window1, window5, window15}
	var sum, dur [3]float64
	newest := t.pts[len(t.pts)-1].at
	for i := len(t.pts) - 1; i >= 1; i-- {
		v, ok := val(t.pts[i])
		if !ok {
			continue
		}
		end, begin := t.pts[i].at, t.pts[i-1].at
		for w, span := range windows {
			b := begin
			if lo := newest.Add(-span); b.Before(lo) {
				b = lo
			}
			if !end.After(b) {
				continue
			}
			d := end.Sub(b).Seconds()
			sum[w] += v * d
			dur[w] += d
		}
	}
	var out [3]float64
	for w := range windows {
		out[w] = now
		if dur[w] > 0 {
			out[w] = sum[w] / dur[w]
		}
	}
	return nodestate.Means{Now: now, M1: out[0], M5: out[1], M15: out[2]}
}
