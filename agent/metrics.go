package agent

import (
	"context"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/metrics"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// metricsRoutes serves GET /v1/metrics (issue 18): the Prometheus text
// format, JSON with ?format=json, behind the same authentication as the
// rest of the API (a scraper presents a client certificate or the token as
// a bearer token). Job figures come from the replicated state, so every
// agent reports the cluster's; raft's and memberlist's are this process's.
func (a *Agent) metricsRoutes(mux *http.ServeMux) {
	m := metrics.New(metrics.Sources{
		JobsByState:     a.jobsByState,
		QueueLength:     func() int { return a.jobsByState()[string(raftfsm.StateQueued)] },
		QueueOldestWait: a.oldestQueuedWait,
		Probes:          a.metricProbes,
		Bandwidth:       a.metricBandwidth,
		RTT:             a.metricRTT,
	})
	if err := metrics.InstallGoMetrics(); err != nil {
		a.log.Warn("no raft or memberlist metrics", "err", err)
	} else if err := m.AddGoMetrics(); err != nil {
		a.log.Warn("no raft or memberlist metrics", "err", err)
	}
	a.route(mux, "GET /v1/metrics", m.Handler().ServeHTTP)
	a.goLoop("metrics", func(ctx context.Context) {
		tick := time.NewTicker(a.cfg.SampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				m.ObserveAttempts(a.metricAttempts())
			}
		}
	})
}

func (a *Agent) jobsByState() map[string]int {
	out := map[string]int{}
	a.fsm.View(func(s *raftfsm.State) {
		for _, j := range s.Jobs {
			out[string(j.State)]++
		}
	})
	return out
}

// oldestQueuedWait is how long the longest-waiting queued job has waited
// since its submission or its last attempt's end (a requeue).
func (a *Agent) oldestQueuedWait() time.Duration {
	now := time.Now()
	var oldest time.Duration
	a.fsm.View(func(s *raftfsm.State) {
		for _, j := range s.Jobs {
			if j.State == raftfsm.StateQueued {
				oldest = max(oldest, now.Sub(waitedSince(j, len(j.Attempts))))
			}
		}
	})
	return oldest
}

// waitedSince is when attempt n+1 of j started waiting for placement.
func waitedSince(j *raftfsm.Job, n int) time.Time {
	if n > 0 && !j.Attempts[n-1].EndedAt.IsZero() {
		return j.Attempts[n-1].EndedAt
	}
	return j.SubmittedAt
}

func (a *Agent) metricAttempts() []metrics.Attempt {
	var out []metrics.Attempt
	a.fsm.View(func(s *raftfsm.State) {
		for id, j := range s.Jobs {
			for i, at := range j.Attempts {
				out = append(out, metrics.Attempt{Job: id, Attempt: i + 1, Waited: waitedSince(j, i),
					Placed: at.PlacedAt, Started: at.StartedAt})
			}
		}
	})
	return out
}

// metricProbes is this node's probe processes as it gossips them.
func (a *Agent) metricProbes() []metrics.Probe {
	now := time.Now()
	var out []metrics.Probe
	for _, b := range a.gossip.Self().Probes {
		p := metrics.Probe{Kind: b.Kind, Restarts: b.Restarts, BeatAge: -1}
		if b.Beat > 0 {
			p.BeatAge = max(now.Sub(time.UnixMilli(b.Beat)), 0)
		}
		out = append(out, p)
	}
	return out
}

// metricBandwidth is this node's row of measured bandwidth, bytes/s.
func (a *Agent) metricBandwidth() map[string]float64 {
	out := map[string]float64{}
	for _, e := range a.gossip.Self().Net {
		if e.BWAt > 0 {
			out[e.Peer] = e.BW * 1e6 / 8 // Mbit/s
		}
	}
	return out
}

// metricRTT is this node's row of mean round-trip times.
func (a *Agent) metricRTT() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, e := range a.gossip.Self().Net {
		if e.RTTAt > 0 {
			out[e.Peer] = time.Duration(e.RTT1 * float64(time.Microsecond))
		}
	}
	return out
}
