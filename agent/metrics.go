package agent

import (
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/metrics"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// metricsSource reads what GET /v1/metrics reports: job
// figures from the replicated state, so every agent reports the cluster's,
// and this node's probes and links from its gossiped state.
type metricsSource struct {
	fsm    *raftfsm.FSM
	gossip *gossip.Gossip
	// row is this node's own network row (netRows' sender holds it).
	row func() nodestate.NetRow
	now func() time.Time
}

// startMetrics builds the handler of GET /v1/metrics: the Prometheus text
// format, JSON with ?format=json, served by httpapi behind the API's usual
// authentication. Raft's and memberlist's metrics are this process's.
func (a *Agent) startMetrics() http.Handler {
	src := metricsSource{fsm: a.fsm, gossip: a.gossip, row: a.rows.sender.Row, now: a.clock}
	m := metrics.New(metrics.Sources{
		JobsByState:         src.jobsByState,
		QueueLength:         func() int { return src.jobsByState()[string(raftfsm.StateQueued)] },
		QueueOldestWait:     src.oldestQueuedWait,
		Probes:              src.probes,
		Bandwidth:           src.bandwidth,
		RTT:                 src.rtt,
		GossipUndecryptable: a.gossip.Undecryptable,
		RaftLogWritable:     func() (bool, bool) { return a.LogFault() == "", a.srv.load() != nil },
	})
	if err := metrics.InstallGoMetrics(); err != nil {
		a.log.Warn("no raft or memberlist metrics", "err", err)
	} else if err := m.AddGoMetrics(); err != nil {
		a.log.Warn("no raft or memberlist metrics", "err", err)
	}
	a.metrics = m // the leader feeds its placement timing (leading.go)
	a.propagation.Store(m)
	a.loops.every("metrics", a.cfg.SampleInterval, func() { m.ObserveAttempts(src.attempts()) })
	return m.Handler()
}

func (a metricsSource) jobsByState() map[string]int {
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
func (a metricsSource) oldestQueuedWait() time.Duration {
	now := a.now()
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

func (a metricsSource) attempts() []metrics.Attempt {
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

// probes is this node's probe processes as it gossips them.
func (a metricsSource) probes() []metrics.Probe {
	now := a.now()
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

// bandwidth is this node's row of measured bandwidth, bytes/s.
func (a metricsSource) bandwidth() map[string]float64 {
	out := map[string]float64{}
	for _, e := range a.row().Cells {
		if e.BWAt > 0 {
			out[e.Peer] = e.AvailMbps * 1e6 / 8 // Mbit/s
		}
	}
	return out
}

// rtt is this node's row of mean round-trip times.
func (a metricsSource) rtt() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, e := range a.row().Cells {
		if e.RTTAt > 0 {
			out[e.Peer] = time.Duration(e.RTT1us * float64(time.Microsecond))
		}
	}
	return out
}
