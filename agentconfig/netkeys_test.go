package agentconfig

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/rows"
	"github.com/shoal-hpc/shoal/probeplan"
)

// The network model's knobs (latency peers, the topology planner's caps,
// the rows' intervals) are keys and flags like the others: a value reaches
// the agent's config, the defaults are the packages' own, and a value out
// of bounds is refused at its line or flag with the bound.
func TestNetworkModelKeys(t *testing.T) {
	t.Parallel()
	d := Default().Config
	if d.Probes.Topo != probeplan.DefaultTopoConfig() || d.Rows != rows.DefaultConfig() || d.Probes.LatencyPeers != 16 {
		t.Fatalf("defaults: topo %+v, rows %+v, latency peers %d", d.Probes.Topo, d.Rows, d.Probes.LatencyPeers)
	}
	src := `data_dir = "/d"
token_file = "t"
latency_peers = 32
topo_own_offsets = 2
topo_pair_tests = 3
topo_cross_per_switch = 8
topo_cross_per_node = 4
topo_uncertain_per_node = 0
topo_explore_per_node = 6
topo_small_cluster = -1
netrow_min_interval = "2s"
netrow_refresh = "5m"
netrow_send_timeout = "3s"
`
	a, err := fromFile(t, src)
	if err != nil {
		t.Fatal(err)
	}
	want := probeplan.TopoConfig{OwnOffsets: 2, PairTests: 3, CrossPerSwitch: 8, CrossPerNode: 4, UncertainPerNode: 0, ExplorePerNode: 6, SmallCluster: -1}
	if c := a.Config; c.Probes.LatencyPeers != 32 || c.Probes.Topo != want ||
		c.Rows != (rows.Config{MinInterval: 2 * time.Second, Refresh: 5 * time.Minute, SendTimeout: 3 * time.Second}) {
		t.Errorf("config: latency peers %d, topo %+v, rows %+v", c.Probes.LatencyPeers, c.Probes.Topo, c.Rows)
	}

	for _, tc := range []struct{ flag, val, want string }{
		{"latency-peers", "-1", "--latency-peers: latency peers -1 is outside 0-4096: pass at most 4096, or 0 for the default 16"},
		{"latency-peers", "5000", "--latency-peers: latency peers 5000 is outside 0-4096"},
		{"topo-own-offsets", "0", "--topo-own-offsets: probe topology: OwnOffsets = 0, want 1..8"},
		{"topo-pair-tests", "9", "--topo-pair-tests: probe topology: PairTests = 9, want 1..8"},
		{"topo-cross-per-switch", "0", "--topo-cross-per-switch: probe topology: CrossPerSwitch = 0, want 1..1024"},
		{"topo-cross-per-node", "65", "--topo-cross-per-node: probe topology: CrossPerNode = 65, want 1..64"},
		{"topo-uncertain-per-node", "-1", "--topo-uncertain-per-node: probe topology: UncertainPerNode = -1, want 0..64"},
		{"topo-explore-per-node", "0", "--topo-explore-per-node: probe topology: ExplorePerNode = 0, want 1..64"},
		{"topo-small-cluster", "-2", "--topo-small-cluster: probe topology: SmallCluster = -2, want -1..1024"},
		{"netrow-min-interval", "-1s", "--netrow-min-interval: network row min interval -1s is negative (--netrow-min-interval; 0 for the default 1s)"},
		{"netrow-min-interval", "2m", "--netrow-min-interval: network row min interval 2m0s exceeds the refresh 1m0s: raise --netrow-refresh or lower --netrow-min-interval"},
		{"netrow-refresh", "100ms", "--netrow-refresh: network row min interval 1s exceeds the refresh 100ms"},
		{"netrow-send-timeout", "-3s", "--netrow-send-timeout: network row send timeout -3s is negative"},
	} {
		a := Default()
		a.Config.Name, a.Config.DataDir, a.Config.Token = "n", "/d", "t"
		var v Value
		k, _ := Lookup(tc.flag)
		switch k.Kind {
		case Int:
			if _, err := fmt.Sscan(tc.val, &v.Int); err != nil {
				t.Fatal(err)
			}
		case Duration:
			d, err := time.ParseDuration(tc.val)
			if err != nil {
				t.Fatal(err)
			}
			v.Dur = d
		}
		if err := a.SetFlag(tc.flag, v); err != nil {
			t.Fatalf("--%s %s: %v", tc.flag, tc.val, err)
		}
		err := a.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--%s %s: got %v, want %q...", tc.flag, tc.val, err, tc.want)
		}
	}
}
