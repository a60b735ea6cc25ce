package agent

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Reloadable is the part of the configuration a running agent takes on
// without a restart (SIGHUP): what the leader reads at every round, and
// the probes' periods and test size and timeout, which the probe manager
// sends to the running probe processes in a new config line.
type Reloadable struct {
	// JobRetention and HistoryRetention as in Config.
	JobRetention, HistoryRetention time.Duration
	// BandwidthInterval and ProbeBudget are the leader's bandwidth
	// schedule: how often a cycle starts, and each node's bytes per hour.
	BandwidthInterval time.Duration
	ProbeBudget       uint64
	// Probes is the latency interval and the bandwidth test's size and
	// timeout: this node's probes take them (probes.Manager.Retune), and
	// the leader's schedule counts the size against the budget and gives
	// each round the timeout.
	Probes probes.Tuning
}

// Reloadable returns c's reloadable part.
func (c Config) Reloadable() Reloadable {
	p := c.Probes.OrDefault()
	return Reloadable{JobRetention: c.JobRetention, HistoryRetention: c.HistoryRetention,
		BandwidthInterval: p.BandwidthInterval, ProbeBudget: p.Budget, Probes: p.Tuning()}
}

// probeConfig is base (the agent's probe config, the zero value standing
// for the defaults) with r's probe settings.
func (r Reloadable) probeConfig(base probes.Config) probes.Config {
	pc := base.OrDefault().WithTuning(r.Probes)
	pc.BandwidthInterval, pc.Budget = r.BandwidthInterval, r.ProbeBudget
	return pc
}

// Validate refuses what Config.Validate would.
func (r Reloadable) Validate() error {
	switch {
	case r.JobRetention < 0:
		return fmt.Errorf("job retention %v is negative: pass 0 to keep finished jobs forever", r.JobRetention)
	case r.HistoryRetention < 0:
		return fmt.Errorf("history retention %v is negative: pass 0 to keep job records (the newest %d)", r.HistoryRetention, raftfsm.MaxHistoryRecords)
	case r.BandwidthInterval <= 0:
		return errors.New("bandwidth interval must be positive")
	}
	return nil
}

// liveConfig holds the reloadable settings; the leader's loops read them
// at every round.
type liveConfig struct{ p atomic.Pointer[Reloadable] }

func (l *liveConfig) load() Reloadable { return *l.p.Load() }

// Reload swaps the reloadable settings for r's, to be read by the next
// leader round, and says what changed ("key old -> new", by file key). A
// bad r changes nothing.
func (a *Agent) Reload(r Reloadable) ([]string, error) {
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	if err := r.probeConfig(a.cfg.Probes).Validate(); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	old := a.live.load()
	var changed []string
	note := func(key string, from, to any) {
		if from != to {
			changed = append(changed, fmt.Sprintf("%s %v -> %v", key, from, to))
		}
	}
	note("bandwidth_bytes", old.Probes.BandwidthBytes, r.Probes.BandwidthBytes)
	note("bandwidth_interval", old.BandwidthInterval, r.BandwidthInterval)
	note("bandwidth_timeout", old.Probes.BandwidthTimeout, r.Probes.BandwidthTimeout)
	note("history_retention", old.HistoryRetention, r.HistoryRetention)
	note("job_retention", old.JobRetention, r.JobRetention)
	note("latency_interval", old.Probes.LatencyInterval, r.Probes.LatencyInterval)
	note("probe_budget", old.ProbeBudget, r.ProbeBudget)
	a.live.p.Store(&r)
	if a.probes != nil {
		a.probes.Retune(r.Probes)
	}
	if len(changed) > 0 {
		a.log.Info("reloaded settings", "changed", changed)
	}
	return changed, nil
}

// ReloadableKeys are the config file keys Reload applies.
var ReloadableKeys = []string{"bandwidth_bytes", "bandwidth_interval", "bandwidth_timeout", "history_retention", "job_retention",
	"latency_interval", "probe_budget"}
