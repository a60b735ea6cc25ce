package agent_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// TestProbes_DirectionsAndFreshTraffic runs four
// agents in network namespaces on one 100 Mbit/s switch, with pd's
// sending direction alone shaped to 30 Mbit/s (tbf on its own end of the
// veth; what it receives stays at 100).
//
//  1. One bandwidth cycle sees the two directions apart: pd to any peer
//     about 30, any peer to pd about 100, from both ends' rows, and
//     `shoal alloc -n 2` leaves pd out.
//  2. Then a bulk TCP flow pa -> pb fills pa's sending and pb's receiving
//     direction. No bandwidth test runs again (--bandwidth-interval 1h),
//     the flow attribute's means are weighted out (--weight flow=0) and
//     latency is neither probed nor estimated, so only the traffic sample
//     can move placement: within one sample interval (3 s; the deadline
//     allows for gossip and a loaded host) `shoal alloc` answers pc and pd,
//     the one pair whose both directions are not full now.
//
// Needs root, iproute2 and iperf3; skips otherwise.
func TestProbes_DirectionsAndFreshTraffic(t *testing.T) {
	names := []string{"pa", "pb", "pc", "pd"}
	topo := netns.Topology{Name: "direction", Switches: []netns.Switch{{Name: "sw"}}}
	for _, n := range names {
		topo.Nodes = append(topo.Nodes, netns.Node{Name: n, Switch: "sw", Mbit: 100})
	}
	tb, bin := netnsTestbed(t, "directional testbed test takes ~1-2 min", topo, "iperf3")
	ctx := t.Context()
	for _, ni := range tb.Nodes() {
		if ni.Name != "pd" {
			continue
		}
		// pd's egress only: 30 Mbit/s, a 64 KiB bucket, ~20 ms of queue.
		out, err := exec.CommandContext(ctx, "tc", "-n", ni.Namespace, "qdisc", "replace", "dev", ni.Iface, "root",
			"tbf", "rate", "30mbit", "burst", "65536", "limit", strconv.Itoa(30_000_000/8/50+65536)).CombinedOutput()
		if err != nil {
			t.Fatalf("shape pd's egress: %v\n%s", err, out)
		}
	}
	agents := startNetnsAgents(t, tb, bin, names, "--bandwidth-interval", "1h", "--bandwidth-timeout", "6s", "--probe-budget", "0",
		"--latency-interval", "1h", "--coordinates=false")
	cli := func(args ...string) (string, error) { return agents.cli(ctx, args...) }

	// 1. Both directions of every pair, from both ends.
	var pairs map[[2]string]api.NetPair
	waitCLI(t, 3*time.Minute, "every pair measured both ways", func() bool {
		out, err := cli("net", "--json")
		if err != nil {
			return false
		}
		var ps []api.NetPair
		if json.Unmarshal([]byte(out), &ps) != nil {
			return false
		}
		pairs = map[[2]string]api.NetPair{}
		for _, p := range ps {
			if p.BWOutMbps != nil && p.BWInMbps != nil && p.BWOutAgeS != nil && p.BWInAgeS != nil {
				pairs[[2]string{p.From, p.To}] = p
			}
		}
		return len(pairs) == len(names)*(len(names)-1)
	})
	// Both ends recorded the same test: a's out is b's in, and back. pd
	// never sends faster than its 30 Mbit/s; what it receives is faster
	// (on a host under load a test may read low, so the best of its three
	// peers, and the median of the other directions).
	t.Log("from to | out Mbit/s | in Mbit/s")
	var others []float64
	bestIntoPD := 0.0
	for _, a := range names {
		for _, b := range names {
			p, ok := pairs[[2]string{a, b}]
			if !ok {
				continue
			}
			t.Logf("%s %s | %6.1f | %6.1f", a, b, *p.BWOutMbps, *p.BWInMbps)
			if q := pairs[[2]string{b, a}]; *q.BWInMbps != *p.BWOutMbps || *q.BWOutMbps != *p.BWInMbps {
				t.Errorf("%s's row says out %.1f in %.1f, %s's says in %.1f out %.1f: the two ends disagree",
					a, *p.BWOutMbps, *p.BWInMbps, b, *q.BWInMbps, *q.BWOutMbps)
			}
			switch {
			case a == "pd" && *p.BWOutMbps > 36:
				t.Errorf("pd->%s measured %.1f Mbit/s through a 30 Mbit/s egress", b, *p.BWOutMbps)
			case a == "pd":
				bestIntoPD = max(bestIntoPD, *p.BWInMbps)
			case b != "pd":
				others = append(others, *p.BWOutMbps)
			}
		}
	}
	slices.Sort(others)
	if med := others[len(others)/2]; bestIntoPD < 60 || med < 50 {
		t.Errorf("fastest into pd %.1f Mbit/s (want > 60: only its egress is shaped), median elsewhere %.1f (want > 50)", bestIntoPD, med)
	}
	var lastAlloc string
	alloc := func() []string {
		out, err := cli("alloc", "-n", "2", "--ppn", "1", "--force", "--weight", "flow=0", "--format", "json")
		lastAlloc = fmt.Sprint(out, err)
		if err != nil {
			return nil
		}
		var d api.AllocDecision
		if json.Unmarshal([]byte(out), &d) != nil {
			return nil
		}
		var hosts []string
		for _, h := range d.Hosts {
			hosts = append(hosts, h.Node)
		}
		slices.Sort(hosts)
		return hosts
	}
	if h := alloc(); len(h) != 2 || slices.Contains(h, "pd") {
		t.Fatalf("quiet cluster: alloc placed on %v, want two nodes without pd (it sends at 30 Mbit/s)", h)
	}

	// 2. A bulk flow pa -> pb; the traffic sample must move placement.
	ipB, _ := tb.Node("pb")
	if _, err := tb.Start(ctx, "pb", []string{"iperf3", "-s", "-p", "5399"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitListening(ctx, "pb", 5399, time.Minute); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := tb.Start(ctx, "pa", []string{"iperf3", "-c", ipB.String(), "-p", "5399", "-t", "600"}, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	t.Cleanup(func() {
		if t.Failed() {
			out, err := cli("nodes", "--json")
			t.Logf("last alloc: %s\nnodes: %s %v", lastAlloc, out, err)
		}
	})
	waitCLI(t, 60*time.Second, "placement to leave pa and pb", func() bool {
		got = alloc()
		return slices.Equal(got, []string{"pc", "pd"})
	})
	t.Logf("placed on %v %.1f s after the flow started (sample interval 3 s)", got, time.Since(start).Seconds())
	out, err := cli("net", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ps []api.NetPair
	if err := json.Unmarshal([]byte(out), &ps); err != nil {
		t.Fatal(err)
	}
	since := time.Since(start).Seconds()
	for _, p := range ps {
		if p.BWOutAgeS != nil && *p.BWOutAgeS < since-2 {
			t.Fatalf("%s->%s was tested %.0f s ago, after the flow started: the move may not be the traffic sample's", p.From, p.To, *p.BWOutAgeS)
		}
	}
}
