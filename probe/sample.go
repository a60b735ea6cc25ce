package probe

import (
	"context"
	"time"
)

// RawSample is one reading of a node's dynamic attributes (seed 002
// Table 1), before any averaging.
type RawSample struct {
	At       time.Time
	Load1    float64 // 1-minute load average as the kernel reports it
	CPUUtil  float64 // percent busy across all logical CPUs since the last sample, 0..100
	MemAvail uint64  // bytes
	// NetBytes is the cumulative count of bytes received plus sent over
	// all non-loopback interfaces; the Tracker turns deltas into a rate.
	NetBytes uint64
	// RxBytes and TxBytes are NetBytes per direction (received, sent);
	// both zero from a sampler that does not tell them apart.
	RxBytes, TxBytes uint64
	Users            int // logged-in sessions
	// ProbeRxBytes and ProbeTxBytes are the bytes of shoal's own
	// bandwidth tests this node received and sent so far (the agent's
	// count, not the sampler's): the Tracker leaves them out of the
	// traffic rates and the flow, because a test is not traffic a job
	// shares a link with, and at a cold start the tests of the first
	// cycle were most of it (on the testbed, docs/design/experiment.md).
	ProbeRxBytes, ProbeTxBytes uint64
	// RecentRx and RecentTx, when RecentSpan > 0, are the byte rates
	// received and sent, bytes/s, over the RecentSpan just before the
	// sample: set when a traffic watch saw the rate shift and called for
	// the sample (TrafficWatch.Recent). They are what is on the link now,
	// where the rate since the previous sample would still average the
	// traffic before the shift (a flow that has just ended) with the
	// quiet after it. They come from TrafficCounter readings, not from
	// RxBytes and TxBytes, whose base may differ.
	RecentRx, RecentTx float64
	RecentSpan         time.Duration
}

// Sampler reads one RawSample. Implementations must not block longer
// than the read itself (no sleeping to measure CPU use) and must honour
// ctx.
type Sampler interface {
	Sample(ctx context.Context) (RawSample, error)
}
