package agent

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes"
)

// Reload swaps what the leader reads at its next round; a bad value
// changes nothing.
func TestReloadReachesTheLeader(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Name = "n1"
	a := &Agent{cfg: cfg, log: slog.New(slog.DiscardHandler)}
	r := cfg.Reloadable()
	a.live.p.Store(&r)
	config := leaderConfig(a.cfg, &elasticSettings{}, &a.live)
	if got := config(); got.JobRetention != 24*time.Hour || got.HistoryRetention != 30*24*time.Hour {
		t.Fatalf("leader config before the reload: %+v", got)
	}

	bad := r
	bad.JobRetention = -time.Second
	if _, err := a.Reload(bad); err == nil {
		t.Fatal("a negative job retention was taken")
	}
	if got := config(); got.JobRetention != 24*time.Hour {
		t.Fatalf("a refused reload changed the leader's job retention to %v", got.JobRetention)
	}

	bad = r
	bad.Probes.LatencyInterval = time.Millisecond
	if _, err := a.Reload(bad); err == nil || !strings.Contains(err.Error(), "latency interval 1ms is below 100ms") {
		t.Fatalf("a 1ms latency interval: %v, want it refused", err)
	}

	next := r
	next.JobRetention, next.HistoryRetention = time.Hour, 48*time.Hour
	next.BandwidthInterval, next.ProbeBudget = 30*time.Minute, 1<<20
	next.Probes = probes.Tuning{LatencyInterval: 10 * time.Second, BandwidthBytes: 1 << 18, BandwidthTimeout: 2 * time.Second}
	changed, err := a.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bandwidth_bytes 4194304 -> 262144", "bandwidth_interval 5m0s -> 30m0s", "bandwidth_timeout 5s -> 2s",
		"history_retention 720h0m0s -> 48h0m0s", "job_retention 24h0m0s -> 1h0m0s", "latency_interval 1m0s -> 10s",
		"probe_budget 1073741824 -> 1048576"}
	if !slices.Equal(changed, want) {
		t.Errorf("changed %q, want %q", changed, want)
	}
	got := config()
	if got.JobRetention != time.Hour || got.HistoryRetention != 48*time.Hour || got.Probes.BandwidthInterval != 30*time.Minute ||
		got.Probes.Budget.BytesPerHour != 1<<20 || got.Probes.Budget.CycleInterval != 30*time.Minute ||
		got.Probes.Budget.TestBytes != 1<<18 || got.Probes.RoundLen != 3*time.Second {
		t.Errorf("leader config after the reload: %+v", got)
	}
	if again, _ := a.Reload(next); len(again) != 0 {
		t.Errorf("the same settings again: changed %q", again)
	}
}

// An agent configured with the zero probes config (the defaults) gives
// the leader the whole default supervision, not just the reloadable part.
func TestReloadKeepsProbeDefaults(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Name, cfg.Probes = "n1", probes.Config{}
	a := &Agent{cfg: cfg, log: slog.New(slog.DiscardHandler)}
	r := cfg.Reloadable()
	a.live.p.Store(&r)
	got, want := leaderConfig(a.cfg, &elasticSettings{}, &a.live)().Probes, probes.DefaultConfig()
	if got.Supervise != want.Supervise || got.BandwidthInterval != want.BandwidthInterval || got.Budget.BytesPerHour != want.Budget {
		t.Errorf("leader probe config %+v, want the defaults %+v", got, want)
	}
}
