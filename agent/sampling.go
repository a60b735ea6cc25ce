package agent

import (
	"context"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/probe"
)

// startSampling reads the node every SampleInterval, folds the reading into
// running means and gossips the result.
func (a *Agent) startSampling() {
	s := a.cfg.Sampler
	if s == nil {
		s = probe.NewHostSampler()
	}
	tr := probe.NewTracker()
	sample := func(ctx context.Context) {
		raw, err := s.Sample(ctx)
		if err != nil {
			a.log.Warn("sample node state", "err", err)
			return
		}
		d := toGossipDynamic(tr.Add(raw))
		a.gossip.Update(func(st *gossip.NodeState) { st.Dyn = d })
	}
	sample(a.ctx)
	a.goLoop("sampling", func(ctx context.Context) {
		t := time.NewTicker(a.cfg.SampleInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sample(ctx)
			}
		}
	})
}
