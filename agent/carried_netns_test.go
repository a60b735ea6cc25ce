package agent_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// TestProbes_CarriedUnderAFlow runs three agents in network namespaces on
// one 100 Mbit/s switch while a 70 Mbit/s UDP stream (iperf3 -u) runs
// pa -> pb, and reads the first bandwidth cycle's tests from `shoal net --json`.
// Each end counts, with its real interface counters around each half of
// a test, what its link carried that way (carried_out_mbps,
// carried_in_mbps):
//
//   - pa -> pb shares the flow's path: the test reads well under the
//     link, and both ends carried about the link's rate, the flow's part
//     besides the test;
//   - pb -> pa is quiet: both ends carried about the reading;
//   - pa -> pc shares pa's link with the flow, not pc's: pa's count is
//     high, pc's is about the reading. Only both ends together prove the
//     path was shared (leader/stamp.go's addBack).
//
// The stream does not back off as a TCP flow does, so the test's share of
// the path is what the stream leaves, whatever the test's own timing (a
// bulk TCP flow in a retransmission timeout once left a whole short test
// the link).
//
// Needs root, iproute2 and iperf3; skips otherwise.
func TestProbes_CarriedUnderAFlow(t *testing.T) {
	names := []string{"pa", "pb", "pc"}
	topo := netns.Topology{Name: "carried", Switches: []netns.Switch{{Name: "sw"}},
		Flows: []netns.Flow{{From: "pa", To: "pb", Mbit: 70, UDP: true}}}
	for _, n := range names {
		topo.Nodes = append(topo.Nodes, netns.Node{Name: n, Switch: "sw", Mbit: 100})
	}
	tb, bin := netnsTestbed(t, "carried-traffic testbed test takes ~1 min", topo, "iperf3")
	agents := startNetnsAgents(t, tb, bin, names, "--bandwidth-interval", "1h", "--bandwidth-timeout", "6s", "--probe-budget", "0",
		"--latency-interval", "1h", "--coordinates=false")
	type dir struct{ bw, carried float64 }
	// got[{x, y}] is the direction x -> y as x's row holds it (out) and
	// as y's row does (in).
	var out, in map[[2]string]dir
	waitCLI(t, 3*time.Minute, "every pair tested both ways and counted at both ends", func() bool {
		s, err := agents.cli(t.Context(), "net", "--json")
		if err != nil {
			return false
		}
		var ps []api.NetPair
		if json.Unmarshal([]byte(s), &ps) != nil {
			return false
		}
		out, in = map[[2]string]dir{}, map[[2]string]dir{}
		for _, p := range ps {
			if p.BWOutMbps != nil && p.CarriedOutMbps != nil {
				out[[2]string{p.From, p.To}] = dir{*p.BWOutMbps, *p.CarriedOutMbps}
			}
			if p.BWInMbps != nil && p.CarriedInMbps != nil {
				in[[2]string{p.To, p.From}] = dir{*p.BWInMbps, *p.CarriedInMbps}
			}
		}
		return len(out) == len(names)*(len(names)-1) && len(in) == len(out)
	})
	t.Log("from to | reading | sender carried | receiver carried (Mbit/s)")
	for k, o := range out {
		t.Logf("%s %s | %5.1f | %5.1f | %5.1f", k[0], k[1], o.bw, o.carried, in[k].carried)
		if in[k].bw != o.bw {
			t.Errorf("%s -> %s: the sender's row reads %.1f, the receiver's %.1f: not the same test", k[0], k[1], o.bw, in[k].bw)
		}
	}
	shared, quiet, paPC := out[[2]string{"pa", "pb"}], out[[2]string{"pb", "pa"}], out[[2]string{"pa", "pc"}]
	if shared.bw > 80 || shared.carried < 80 || in[[2]string{"pa", "pb"}].carried < 80 {
		t.Errorf("pa -> pb under the flow: read %.1f, pa carried %.1f, pb %.1f; want a reading under 80 and both counts at 80 or more",
			shared.bw, shared.carried, in[[2]string{"pa", "pb"}].carried)
	}
	if quiet.carried-quiet.bw > 15 || in[[2]string{"pb", "pa"}].carried-quiet.bw > 15 {
		t.Errorf("pb -> pa, quiet: read %.1f, pb carried %.1f, pa %.1f; want both within 15 of the reading",
			quiet.bw, quiet.carried, in[[2]string{"pb", "pa"}].carried)
	}
	if paPC.carried-paPC.bw < 20 || in[[2]string{"pa", "pc"}].carried-paPC.bw > 15 {
		t.Errorf("pa -> pc, pa's link shared with the flow, pc's not: read %.1f, pa carried %.1f, pc %.1f; want pa's 20 above the reading, pc's within 15",
			paPC.bw, paPC.carried, in[[2]string{"pa", "pc"}].carried)
	}
}
