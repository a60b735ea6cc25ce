package placement_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

// queueCluster is the testbed's queue12 as the agents measure it when
// nothing but its own background runs: sw1 (n01-n04, 200 Mbit/s links)
// with a bulk flow n01 -> n02 filling n01's link out and n02's in; sw2
// (n05-n08) on 100 Mbit/s links, tested at 106; sw3 (n09-n12) on 200
// Mbit/s links but n11 behind a 20 Mbit/s cable; 60 Mbit/s uplinks
// sw1-sw2 and sw2-sw3, so a pair across switches gets 60 whichever they
// are. Two cores a node, the case's background loads (0.01-0.10).
func queueCluster() placement.Snapshot {
	type nd struct {
		sw   string
		mbit float64
		load float64
	}
	nodes := map[string]nd{
		"n01": {"sw1", 200, 0.04}, "n02": {"sw1", 200, 0.02}, "n03": {"sw1", 200, 0.09}, "n04": {"sw1", 200, 0.06},
		"n05": {"sw2", 106, 0.03}, "n06": {"sw2", 106, 0.08}, "n07": {"sw2", 106, 0.05}, "n08": {"sw2", 106, 0.01},
		"n09": {"sw3", 200, 0.07}, "n10": {"sw3", 200, 0.02}, "n11": {"sw3", 21, 0.01}, "n12": {"sw3", 200, 0.10},
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	slices.Sort(names)
	var s placement.Snapshot
	for _, name := range names {
		x := node(name, 2, nodes[name].load)
		x.Switch = nodes[name].sw
		switch name {
		case "n01":
			x.NetTxBytesPerSec = 190e6 / 8
		case "n02":
			x.NetRxBytesPerSec = 190e6 / 8
		}
		s.Nodes = append(s.Nodes, x)
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			av := min(nodes[a].mbit, nodes[b].mbit)
			if nodes[a].sw != nodes[b].sw {
				av = min(av, 60)
			}
			s.Links = append(s.Links, link(a, b, 0.1, av, av), link(b, a, 0.1, av, av))
		}
	}
	return s
}

func placeN(t *testing.T, s placement.Snapshot, n int) (placement.Decision, []string) {
	t.Helper()
	d, err := placement.Place(s, placement.Request{N: n, PPN: 1, Policy: "netload", Force: true})
	if err != nil || d.Wait {
		t.Fatalf("place %d: %+v %v", n, d, err)
	}
	var hosts []string
	for _, h := range d.Hosts {
		hosts = append(hosts, h.Node)
	}
	slices.Sort(hosts)
	return d, hosts
}

// scoreGroup is netload's breakdown of the group of hosts, one rank each.
func scoreGroup(t *testing.T, s placement.Snapshot, hosts ...string) placement.Breakdown {
	t.Helper()
	var hf []placement.HostSlots
	for _, h := range hosts {
		hf = append(hf, placement.HostSlots{Host: h, Slots: 1})
	}
	d, err := placement.Place(s, placement.Request{N: len(hosts), PPN: 1, Policy: "netload", Force: true, Hostfile: hf, Relax: "none"})
	if err != nil {
		t.Fatalf("score %v: %v", hosts, err)
	}
	return d.Score
}

func switchesOf(s placement.Snapshot, hosts []string) []string {
	var sws []string
	for _, n := range s.Nodes {
		if slices.Contains(hosts, n.Name) && !slices.Contains(sws, n.Switch) {
			sws = append(sws, n.Switch)
		}
	}
	return sws
}

// TestNetload_QueueSizesEachOnItsBestGroup: jobs of 2, 4 and 6 ranks on
// the quiet queueCluster. Two ranks go to a pair on a 200 Mbit/s switch
// (n03-n04 or sw3 without n11); four to sw2, the only switch with four
// usable nodes (every other group of four crosses a 60 Mbit/s uplink);
// six need two switches, never the flow's ends nor n11.
func TestNetload_QueueSizesEachOnItsBestGroup(t *testing.T) {
	t.Parallel()
	s := queueCluster()
	_, two := placeN(t, s, 2)
	if sws := switchesOf(s, two); len(sws) != 1 || sws[0] == "sw2" || slices.Contains(two, "n11") || slices.Contains(two, "n01") || slices.Contains(two, "n02") {
		t.Errorf("2 ranks on %v, want a 200 Mbit/s pair on one switch", two)
	}
	_, four := placeN(t, s, 4)
	if want := []string{"n05", "n06", "n07", "n08"}; !slices.Equal(four, want) {
		t.Errorf("4 ranks on %v, want sw2's %v", four, want)
	}
	// The margin: T of sw2's four against n04 with sw3's three, whose
	// three pairs across the uplinks every exchange of n04's rank waits on.
	a, b := scoreGroup(t, s, "n05", "n06", "n07", "n08"), scoreGroup(t, s, "n04", "n09", "n10", "n12")
	t.Logf("T of sw2's four %.3f, of n04 with sw3's three %.3f (%.2f times)", a.T, b.T, b.T/a.T)
	if a.T >= b.T {
		t.Errorf("T of sw2's four %.3f is not below n04 with sw3's three %.3f", a.T, b.T)
	}
	_, six := placeN(t, s, 6)
	if sws := switchesOf(s, six); len(sws) != 2 {
		t.Errorf("6 ranks on %v (%s), want two switches", six, strings.Join(sws, ","))
	}
	for _, x := range []string{"n01", "n02", "n11"} {
		if slices.Contains(six, x) {
			t.Errorf("6 ranks on %v: holds %s", six, x)
		}
	}
}

// TestNetload_QueueFourRanksAfterPredecessor: a job of four ranks asked
// for right after another job left n03, n05, n06 and n07 (the queue's
// previous job, which shoal did not start). The latest traffic sample of
// those nodes, taken while that job ran, still holds its 44 Mbit/s each
// way: on that sample sw2's pairs offer about 62 Mbit/s, as little as a
// pair across the 60 Mbit/s uplinks, and netload leaves sw2, as the
// sample says the links are busy now. With the next sample (the traffic
// gone, the 1-, 5- and 15-minute means of node flow still holding it)
// sw2 is free, and netload takes it: what has stopped stops counting at
// the next sample, whatever the means hold.
func TestNetload_QueueFourRanksAfterPredecessor(t *testing.T) {
	t.Parallel()
	prev := []string{"n03", "n05", "n06", "n07"}
	const rate = 44e6 / 8 // bytes/s, each way
	sampled := func(during bool) placement.Snapshot {
		s := queueCluster()
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if !slices.Contains(prev, n.Name) {
				continue
			}
			n.NetFlow = nodestate.Means{Now: 2 * rate, M1: 2 * rate, M5: 2 * rate, M15: 2 * rate}
			if during {
				n.NetTxBytesPerSec, n.NetRxBytesPerSec = rate, rate
			} else {
				n.NetFlow.Now = 0
			}
		}
		return s
	}
	sw2 := []string{"n05", "n06", "n07", "n08"}
	d, during := placeN(t, sampled(true), 4)
	if slices.Equal(during, sw2) {
		t.Errorf("sample taken while the previous job ran: placed on sw2 (%s); its 62 Mbit/s pairs should read as busy as the uplinks", hostsString(d))
	}
	d, after := placeN(t, sampled(false), 4)
	if !slices.Equal(after, sw2) {
		t.Errorf("sample taken after the previous job ended: placed on %s, want sw2 %v: the means held the traffic that stopped", hostsString(d), sw2)
	}
	t.Logf("during the previous job's sample %v, after it %v", during, after)
}
