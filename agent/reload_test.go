package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Agent.Reload's new latency interval reaches the running latency probe
// (in-process here, under the race detector; cmd/shoal's
// TestAgentSIGHUPProbeIntervals does it with probe processes and SIGHUP):
// at one ping an hour n0 measures its RTT to n1 once, after the reload
// again and again.
func TestReloadLatencyInterval(t *testing.T) {
	t.Parallel()
	configure := func(i int, cfg *agent.Config) {
		fastProbes(i, cfg)
		cfg.Probes.LatencyInterval, cfg.Probes.BandwidthInterval = time.Hour, time.Hour
	}
	c := testcluster.New(t, 2, testcluster.Options{Twins: true, Configure: configure})
	c.WaitLeader(30 * time.Second)
	ctx := context.Background()
	rttAt := func() time.Time {
		pairs, err := c.Client(0).Net(ctx)
		if err != nil {
			return time.Time{}
		}
		for _, p := range pairs {
			if p.From == c.Name(0) && p.To == c.Name(1) {
				return p.RTTAt
			}
		}
		return time.Time{}
	}
	var first time.Time
	testcluster.WaitFor(t, 30*time.Second, "n0's first RTT to n1", func() bool { first = rttAt(); return !first.IsZero() }, c.Describe)

	cfg := agent.DefaultConfig()
	configure(0, &cfg)
	r := cfg.Reloadable()
	r.Probes.LatencyInterval = 200 * time.Millisecond
	changed, err := c.Agent(0).Reload(r)
	if err != nil || len(changed) != 1 || changed[0] != "latency_interval 1h0m0s -> 200ms" {
		t.Fatalf("Reload = %q, %v", changed, err)
	}
	seen := map[time.Time]bool{}
	testcluster.WaitFor(t, 20*time.Second, "three new RTT measurements after the reload", func() bool {
		if at := rttAt(); at.After(first) {
			seen[at] = true
		}
		return len(seen) >= 3
	}, func() string { return fmt.Sprintf("measured at %v after %v", seen, first) })
}
