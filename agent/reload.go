package agent

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// Reloadable is the part of the configuration a running agent takes on
// without a restart (SIGHUP): what the leader reads at every round. The
// probes' own settings (latency interval, test size and timeout) go to
// the probe processes when they start and need a restart.
type Reloadable struct {
	// JobRetention and HistoryRetention as in Config.
	JobRetention, HistoryRetention time.Duration
	// BandwidthInterval and ProbeBudget are the leader's bandwidth
	// schedule: how often a cycle starts, and each node's bytes per hour.
	BandwidthInterval time.Duration
	ProbeBudget       uint64
}

// Reloadable returns c's reloadable part.
func (c Config) Reloadable() Reloadable {
	p := c.Probes.OrDefault()
	return Reloadable{JobRetention: c.JobRetention, HistoryRetention: c.HistoryRetention,
		BandwidthInterval: p.BandwidthInterval, ProbeBudget: p.Budget}
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
	old := a.live.load()
	var changed []string
	note := func(key string, from, to any) {
		if from != to {
			changed = append(changed, fmt.Sprintf("%s %v -> %v", key, from, to))
		}
	}
	note("bandwidth_interval", old.BandwidthInterval, r.BandwidthInterval)
	note("history_retention", old.HistoryRetention, r.HistoryRetention)
	note("job_retention", old.JobRetention, r.JobRetention)
	note("probe_budget", old.ProbeBudget, r.ProbeBudget)
	a.live.p.Store(&r)
	if len(changed) > 0 {
		a.log.Info("reloaded settings", "changed", changed)
	}
	return changed, nil
}

// ReloadableKeys are the config file keys Reload applies.
var ReloadableKeys = []string{"bandwidth_interval", "history_retention", "job_retention", "probe_budget"}
