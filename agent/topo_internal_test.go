package agent

import (
	"log/slog"
	"testing"

	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/probeplan"
)

// The topology planner's caps (--topo-*) reach the leader core's config;
// an agent with the zero probes config gives it the planner's defaults.
func TestLeaderConfigCarriesTopo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  probes.Config
		want probeplan.TopoConfig
	}{
		{"set", func() probes.Config {
			c := probes.DefaultConfig()
			c.Topo = probeplan.TopoConfig{OwnOffsets: 2, PairTests: 1, CrossPerSwitch: 4, CrossPerNode: 1, UncertainPerNode: 0, ExplorePerNode: 2, SmallCluster: -1}
			return c
		}(), probeplan.TopoConfig{OwnOffsets: 2, PairTests: 1, CrossPerSwitch: 4, CrossPerNode: 1, UncertainPerNode: 0, ExplorePerNode: 2, SmallCluster: -1}},
		{"zero probes config", probes.Config{}, probeplan.DefaultTopoConfig()},
	} {
		cfg := DefaultConfig()
		cfg.Name, cfg.Probes = "n1", tc.set
		a := &Agent{cfg: cfg, log: slog.New(slog.DiscardHandler)}
		r := cfg.Reloadable()
		a.live.p.Store(&r)
		if got := leaderConfig(a.cfg, &elasticSettings{}, &a.live)().Probes.Topo; got != tc.want {
			t.Errorf("%s: the leader plans with %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
