package probes

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
)

// The node-state probe (seed 002's NodeStateD) runs as its own process,
// `shoal probe nodestate`, or in-process when a Sampler is injected or
// there is no binary; either way its raw samples come here. The running
// means live in the manager, so a probe that crashes and is relaunched
// loses no history.

type samples struct {
	mu      sync.Mutex
	tr      *probe.Tracker
	publish func(nodestate.Dynamic)
	// probeRx and probeTx count the bytes of this node's bandwidth tests,
	// as client and as server, received and sent (RawSample.ProbeRxBytes).
	probeRx, probeTx atomic.Uint64
	// inTest reports whether a test or link check of this node is running
	// now; nil: never.
	inTest func() bool
}

// testBytes counts one bandwidth test's payload: rx received, tx sent.
func (s *samples) testBytes(rx, tx uint64) {
	s.probeRx.Add(rx)
	s.probeTx.Add(tx)
}

func newSamples(publish func(nodestate.Dynamic)) *samples {
	if publish == nil {
		publish = func(nodestate.Dynamic) {}
	}
	return &samples{tr: probe.NewTracker(), publish: publish}
}

// firstSample, when the sampler runs in this process anyway, takes a
// first sample at once so the node's first gossiped state already has its
// load.
func (m *Manager) firstSample(ctx context.Context) {
	if m.d.Sampler == nil {
		return
	}
	raw, err := m.d.Sampler.Sample(ctx)
	if err != nil {
		m.log.Warn("sample node state", "err", err)
		return
	}
	m.smp.ingest(raw)
}

// ingest folds one raw sample into the running means and publishes the
// result.
func (s *samples) ingest(raw probe.RawSample) {
	raw.ProbeRxBytes, raw.ProbeTxBytes = s.probeRx.Load(), s.probeTx.Load()
	// A running test's bytes are on the counters the recent rates come
	// from, and are counted as a test's only when it ends: while one runs,
	// the sample keeps its interval's rates, whose test bytes the next
	// sample takes back out.
	if s.inTest != nil && s.inTest() {
		raw.RecentRx, raw.RecentTx, raw.RecentSpan = 0, 0, 0
	}
	s.mu.Lock()
	d := s.tr.Add(raw)
	s.mu.Unlock()
	s.publish(d)
}
