package agent_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// TestProbes_LinkCheckSeesADegradedLink runs four agents in network
// namespaces on one 100 Mbit/s switch with the bandwidth cycle an hour
// apart. After the first cycle measured every pair, pd's link drops to
// 10 Mbit/s both ways. No cycle would test it again for an hour: pd's
// link checks (about every 5 s, two peers to confirm) must notice, and the
// leader must have pd's pairs tested again, so that `shoal net --json`
// shows every pair of pd at the new rate within linkCheckDeadline. The
// other pairs, untouched, are not tested again: the checks do not fire
// on a link that did not change.
//
// Needs root and iproute2; skips otherwise.
func TestProbes_LinkCheckSeesADegradedLink(t *testing.T) {
	// Two checks of different peers (each wait drawn within 2.5-7.5 s),
	// gossip, a leader round, a catch-up of pd's three pairs (three 5 s
	// rounds): 29-34 s on a quiet machine, at most about 40 s. waitCLI
	// stretches the bound by testcluster.Slack (up to 4× at a load of 4
	// per CPU), as a loaded host stretches every step.
	const linkCheckDeadline = 75 * time.Second
	names := []string{"pa", "pb", "pc", "pd"}
	topo := netns.Topology{Name: "linkcheck", Switches: []netns.Switch{{Name: "sw"}}}
	for _, n := range names {
		topo.Nodes = append(topo.Nodes, netns.Node{Name: n, Switch: "sw", Mbit: 100})
	}
	tb, bin := netnsTestbed(t, "link check testbed test takes ~1-2 min", topo)
	ctx := t.Context()
	agents := startNetnsAgents(t, tb, bin, names, "--bandwidth-interval", "1h", "--bandwidth-timeout", "4s", "--bandwidth-bytes", "1MiB",
		"--probe-budget", "0", "--latency-interval", "1h", "--coordinates=false", "--link-check-interval", "5s")
	net := func() map[[2]string]api.NetPair {
		out, err := agents.cli(ctx, "net", "--json")
		if err != nil {
			return nil
		}
		var ps []api.NetPair
		if json.Unmarshal([]byte(out), &ps) != nil {
			return nil
		}
		m := map[[2]string]api.NetPair{}
		for _, p := range ps {
			if p.BWOutMbps != nil && p.BWInMbps != nil && p.BWOutAgeS != nil && p.BWInAgeS != nil {
				m[[2]string{p.From, p.To}] = p
			}
		}
		return m
	}
	waitCLI(t, 3*time.Minute, "every pair measured both ways", func() bool {
		return len(net()) == len(names)*(len(names)-1)
	})
	if err := tb.SetNodeRates(ctx, "pd", 10, 10); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	var pairs map[[2]string]api.NetPair
	waitCLI(t, linkCheckDeadline, "every pair of pd read at the new rate", func() bool {
		pairs = net()
		slow := 0
		for _, peer := range names[:3] {
			if p, ok := pairs[[2]string{"pd", peer}]; ok && *p.BWOutMbps < 20 && *p.BWInMbps < 20 {
				slow++
			}
		}
		return slow == 3
	})
	took := time.Since(changed)
	t.Logf("every pair of pd read at 10 Mbit/s %.1f s after its link dropped (link checks about every 5 s, bandwidth interval 1h)", took.Seconds())
	for k, p := range pairs {
		t.Logf("%s->%s out %.1f in %.1f Mbit/s, tested %.0f s ago", k[0], k[1], *p.BWOutMbps, *p.BWInMbps, *p.BWOutAgeS)
		// Reported, not failed: on a host whose CPUs are starved a check's
		// transfer runs slow on any link, and a re-test it books costs a
		// test, not a wrong figure. The judge's rules against ordinary
		// traffic are unit-tested in probeplan.
		if k[0] != "pd" && k[1] != "pd" && *p.BWOutAgeS < took.Seconds() {
			t.Logf("%s->%s was tested again %.0f s ago, after pd's change: a check fired on a link that did not change (test slack %.1f, from the host load)", k[0], k[1], *p.BWOutAgeS, testcluster.Slack())
		}
	}
}
