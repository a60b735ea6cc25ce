package probe

import (
	"context"
	"time"
)

// TrafficCounter is a Sampler that can also read its traffic counters
// alone, cheaply enough to read several times per sample interval: the
// cumulative bytes received and sent over the interfaces a sample counts.
type TrafficCounter interface {
	Traffic(ctx context.Context) (rx, tx uint64, err error)
}

// MinTrafficShift is the smallest change of a direction's rate, bytes/s,
// that TrafficWatch calls a shift: 1 Mbit/s, well below what an MPI job
// or a contending flow moves, well above what a node's chatter does.
const MinTrafficShift = 125_000

// TrafficWatch decides when a node's traffic has moved so far from what
// its last sample published that a sample should be taken at once,
// rather than at the next tick. Placement reads the latest sample's
// traffic as what is on the node's link now: when a job's transfers end,
// the sample taken while they ran held them against the node for up to a
// whole interval, and a job placed right after a job left the best nodes
// avoided them (the placement experiment's back-to-back runs). A sample
// it calls for publishes the rate of the reading that saw the shift
// (Recent, SampledRecent). The reading in which a flow ends still holds
// part of it; when that part is under half, the reading is a shift and
// its sample shows the rest, and the next reading, quiet, is a shift in
// the same direction that MinGap does not hold back: traffic that stops
// leaves the published rates within two watch periods.
//
// It is pure: the caller reads the counters and passes the times.
type TrafficWatch struct {
	// MinGap is the least time between samples it calls for: bursty
	// traffic (an MPI job's compute and exchange phases) shifts at every
	// reading, and a sample per reading would gossip a state update each
	// time and crowd the 15-minute means' sample budget. 0: no bound.
	// Two exceptions, neither of which bursty traffic meets: the regular
	// samples do not count (a tick just after a flow ended published
	// its average with the flow), and a shift that continues the one
	// the latest sample was called for (down after down, up after up: a
	// flow's end or start split across two readings) is not held back.
	MinGap time.Duration

	// Burst is how many samples it may call for in a row before MinGap
	// spaces them: each sample takes one of Burst credits, and a credit
	// comes back every MinGap. Over any time T it calls for at most
	// Burst + T/MinGap samples, yet a flow that ends just after a sample
	// (its start's, or a rate that wavered) is sampled at once rather
	// than held back for MinGap. 0 or 1: MinGap between every two.
	Burst int

	// MinSpan is the least time a reading covers: one closer than that
	// to the reading or sample before it is left out, as if not taken,
	// and the next covers the time of both. On a loaded host a ticker's
	// late tick and the next one come close together, and over a few
	// milliseconds a steady flow's rate is its packets' bursts: a
	// "shift" that is not there, whose sample would hold back the
	// flow's end for MinGap. 0: no bound.
	MinSpan time.Duration

	// last full samples: counters and times of the latest two
	pubAt, prevAt  time.Time
	pubRx, pubTx   uint64
	prevRx, prevTx uint64
	samples        int
	// pubRecent: the latest sample published the rates of the reading
	// that called for it (SampledRecent), held in pubRateRx, pubRateTx,
	// rather than the rates between the latest two samples.
	pubRecent            bool
	pubRateRx, pubRateTx float64
	// credit is what Burst had left at creditAt, the latest sample it
	// called for (full before the first); shiftDir the way the rates
	// moved then (-1 down, +1 up).
	credit         float64
	creditAt       time.Time
	shiftDir       int
	dir            int       // the way the latest reading moved from the published rates
	readAt         time.Time // latest reading, sample or watch
	readRx, readTx uint64
	// the rates over the latest watch reading; recentSpan 0: unknown
	recentRx, recentTx float64
	recentSpan         time.Duration
}

// Sampled records the counters read when a full sample was taken.
func (w *TrafficWatch) Sampled(at time.Time, rx, tx uint64) {
	w.prevAt, w.prevRx, w.prevTx = w.pubAt, w.pubRx, w.pubTx
	w.pubAt, w.pubRx, w.pubTx = at, rx, tx
	w.samples++
	w.readAt, w.readRx, w.readTx = at, rx, tx
	w.pubRecent, w.recentSpan = false, 0
}

// SampledRecent is Sampled for a sample that published the rates of
// Recent, as read before it, as the node's traffic now: later readings
// are compared with those rates, not with the rates between the latest
// two samples, which still average in the traffic before the shift (a
// flow that stopped would look like a shift again at the next reading).
// With no recent rates known it is Sampled.
func (w *TrafficWatch) SampledRecent(at time.Time, rx, tx uint64) {
	rrx, rtx, span := w.Recent()
	dir, prevShift := w.dir, w.shiftDir
	w.Sampled(at, rx, tx)
	w.credit, w.creditAt, w.shiftDir = max(0, w.credits(at)-1), at, 0
	if span > 0 {
		w.pubRecent, w.pubRateRx, w.pubRateTx = true, rrx, rtx
		// One continuation per shift: a sample that continued the one
		// before it (or could have) allows none after it, so a rate
		// that keeps ramping one way is spaced by the credits like any
		// other traffic, not sampled at every reading.
		if prevShift == 0 || prevShift != dir {
			w.shiftDir = dir
		}
	}
}

// Recent reports the byte rates received and sent, bytes/s, over the
// latest reading Check took and the time it covered, since the reading
// (or sample) before it: what is on the link now, to a watch period. span
// is 0 when that reading told nothing (counters that went back, a clock
// that did not move) or a sample was taken since.
func (w *TrafficWatch) Recent() (rx, tx float64, span time.Duration) {
	return w.recentRx, w.recentTx, w.recentSpan
}

// Check records a reading between samples and reports whether a sample
// is due: the rate since the previous reading (Recent) differs, in
// either direction, from the rate the latest sample published (the one
// between the latest two samples, or the recent one SampledRecent
// recorded) by more than half of it and more than MinTrafficShift, and
// MinGap has passed since the latest sample it called for, or Burst
// allows one more (see MinGap for the exceptions). After the first sample, which published no rate,
// any rate above MinTrafficShift is a shift. Counters that went back (an
// interface gone) or a clock that did not move decide nothing; a reading
// within MinSpan of the one before is left out.
func (w *TrafficWatch) Check(at time.Time, rx, tx uint64) bool {
	prevAt, prevRx, prevTx := w.readAt, w.readRx, w.readTx
	if at.After(prevAt) && at.Sub(prevAt) < w.MinSpan {
		return false
	}
	w.readAt, w.readRx, w.readTx = at, rx, tx
	w.recentSpan = 0
	if w.samples == 0 || !at.After(prevAt) || rx < prevRx || tx < prevTx {
		return false
	}
	dt := at.Sub(prevAt).Seconds()
	w.recentRx, w.recentTx, w.recentSpan = float64(rx-prevRx)/dt, float64(tx-prevTx)/dt, at.Sub(prevAt)
	w.dir = 0
	var pubRx, pubTx float64
	switch {
	case w.pubRecent:
		pubRx, pubTx = w.pubRateRx, w.pubRateTx
	case w.samples > 1:
		if w.pubRx < w.prevRx || w.pubTx < w.prevTx || !w.pubAt.After(w.prevAt) {
			return false
		}
		pdt := w.pubAt.Sub(w.prevAt).Seconds()
		pubRx, pubTx = float64(w.pubRx-w.prevRx)/pdt, float64(w.pubTx-w.prevTx)/pdt
	}
	if !shifted(pubRx, w.recentRx) && !shifted(pubTx, w.recentTx) {
		return false
	}
	w.dir = sign(w.recentRx + w.recentTx - pubRx - pubTx)
	continues := w.pubRecent && w.shiftDir != 0 && w.dir == w.shiftDir
	return continues || w.credits(at) >= 1
}

// credits is how many samples it may call for at once at time at.
func (w *TrafficWatch) credits(at time.Time) float64 {
	full := float64(max(w.Burst, 1))
	if w.creditAt.IsZero() || w.MinGap <= 0 {
		return full
	}
	return min(full, w.credit+float64(at.Sub(w.creditAt))/float64(w.MinGap))
}

// sign is -1, 0 or +1 as v is below, at or above 0.
func sign(v float64) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// shifted reports whether rate now is far from the published one.
func shifted(published, now float64) bool {
	d := now - published
	if d < 0 {
		d = -d
	}
	return d > max(published/2, MinTrafficShift)
}
