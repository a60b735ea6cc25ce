package agent

import (
	"sync"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/probe"
)

// The node-state probe (seed 002's NodeStateD) runs as its own process,
// `shoal probe nodestate`, or in-process when a Sampler is injected or
// there is no binary; either way its raw samples come here. The running
// means live in the agent, so a probe that crashes and is relaunched
// loses no history.

type sampling struct {
	mu sync.Mutex
	tr *probe.Tracker
}

// startSampling prepares the tracker and, when the sampler runs in this
// process anyway, takes a first sample at once so the node's first
// gossiped state already has its load.
func (a *Agent) startSampling() {
	a.sampling = &sampling{tr: probe.NewTracker()}
	if a.cfg.Sampler == nil {
		return
	}
	raw, err := a.cfg.Sampler.Sample(a.ctx)
	if err != nil {
		a.log.Warn("sample node state", "err", err)
		return
	}
	a.ingestSample(raw)
}

// ingestSample folds one raw sample into the running means and gossips
// the result.
func (a *Agent) ingestSample(raw probe.RawSample) {
	a.sampling.mu.Lock()
	d := toGossipDynamic(a.sampling.tr.Add(raw))
	a.sampling.mu.Unlock()
	a.gossip.Update(func(st *gossip.NodeState) { st.Dyn = d })
}
