package placement_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// threeSwitches: a1-a4, b1-b4, c1-c4 on three switches, one core each,
// every pair tested (950 of 1,000 Mbit/s on a switch, 900 of 1,000
// between A and B, 500 of 600 between C and the others), and a network
// model that knows the switches and the switch-pair capacities but
// derives nothing (every pair has its test), as the leader hands it over
// on a small cluster. A 6-process job needs two switches; quiet, A and B
// (the fast uplink) are the best pair of switches.
func threeSwitches(model bool) placement.Snapshot {
	var s placement.Snapshot
	names := []string{"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4", "c1", "c2", "c3", "c4"}
	for _, n := range names {
		nd := node(n, 1, 0)
		nd.Switch = "sw" + n[:1]
		s.Nodes = append(s.Nodes, nd)
	}
	sw := func(n string) int32 { return int32(n[0] - 'a') }
	crossAvail := func(x, y int32) (float64, float64) {
		if x == 2 || y == 2 {
			return 500, 600
		}
		return 900, 1000
	}
	m := &placement.PairModel{NS: 3, Direct: make([][]placement.PairDirect, len(names)),
		SwOK: make([]bool, 9), SwAvail: make([]float64, 9), SwPeak: make([]float64, 9), SwRTTus: make([]float64, 9)}
	for i, a := range names {
		m.Sw = append(m.Sw, sw(a))
		m.Known = append(m.Known, true)
		m.Avail, m.Peak = append(m.Avail, 950), append(m.Peak, 1000)
		for j := i + 1; j < len(names); j++ {
			b := names[j]
			av, pk := 950.0, 1000.0
			if sw(a) != sw(b) {
				av, pk = crossAvail(sw(a), sw(b))
			}
			s.Links = append(s.Links, link(a, b, 0.2, av, pk), link(b, a, 0.2, av, pk))
			m.Direct[i] = append(m.Direct[i], placement.PairDirect{J: int32(j), BW: true, RTTus: 200})
		}
	}
	for x := range int32(3) {
		for y := range int32(3) {
			k := x*3 + y
			m.SwOK[k], m.SwRTTus[k] = true, 200
			if x != y {
				m.SwAvail[k], m.SwPeak[k] = crossAvail(x, y)
			}
		}
	}
	if model {
		s.Model = m
	}
	return s
}

// flow puts a bulk flow from -> to at 960 Mbit/s (the sender's tx, the
// receiver's rx: what their traffic samples would say).
func flow(s *placement.Snapshot, from, to string) {
	for i := range s.Nodes {
		switch s.Nodes[i].Name {
		case from:
			s.Nodes[i].NetTxBytesPerSec = 120e6
		case to:
			s.Nodes[i].NetRxBytesPerSec = 120e6
		}
	}
}

func place6(t *testing.T, s placement.Snapshot) (placement.Decision, string) {
	t.Helper()
	d, err := placement.Place(s, placement.Request{N: 6, Policy: "netload", Force: true})
	if err != nil || d.Wait {
		t.Fatalf("place: %+v %v", d, err)
	}
	return d, hostsString(d)
}

// spansAB: the group has a node on A and one on B, so its traffic
// crosses the uplink between them.
func spansAB(hosts string) bool { return strings.Contains(hosts, "a") && strings.Contains(hosts, "b") }

// TestNetload_LoadedUplinkAvoided: a bulk flow a4 -> b4 fills the uplink
// A -> B (the tests ran before it started, so they still say 900). The
// node term sees a4's and b4's links full but not that every other
// A -> B pair shares the same uplink; the uplink term (A's nodes send 960
// Mbit/s in all, B's receive 960, so up to 960 of the uplink's 1,000
// cross) leaves 40 Mbit/s A -> B, and netload moves to a group that
// avoids the uplink.
func TestNetload_LoadedUplinkAvoided(t *testing.T) {
	t.Parallel()
	if _, got := place6(t, threeSwitches(true)); !spansAB(got) {
		t.Fatalf("quiet: placed on %s, want switches A and B (the fast uplink)", got)
	}
	s := threeSwitches(false)
	flow(&s, "a4", "b4")
	before, got := place6(t, s)
	if !spansAB(got) {
		t.Fatalf("flow a4 -> b4, no model (no uplink term): placed on %s, want A and B still", got)
	}
	s = threeSwitches(true)
	flow(&s, "a4", "b4")
	after, got := place6(t, s)
	if spansAB(got) {
		t.Fatalf("flow a4 -> b4 fills the uplink A -> B: placed on %s, want a group that does not cross it", got)
	}
	t.Logf("before %s, after %s", hostsString(before), got)
	// The group chosen before, scored now: worse than before, as its
	// A -> B pairs have 40 Mbit/s, not 900.
	hf := make([]placement.HostSlots, len(before.Hosts))
	for i, h := range before.Hosts {
		hf[i] = placement.HostSlots{Host: h.Node, Slots: h.NP}
	}
	old, err := placement.Place(s, placement.Request{N: 6, Policy: "netload", Force: true, Hostfile: hf, Relax: "none"})
	if err != nil || !reflect.DeepEqual(old.Hosts, before.Hosts) {
		t.Fatalf("the group chosen before, by hostfile: %+v %v", old, err)
	}
	if old.Score.MeanAvailMbps >= before.Score.MeanAvailMbps || old.Score.T <= after.Score.T {
		t.Fatalf("the A+B group with the uplink term: mean avail %v (without %v), T %v (chosen group %v); want worse",
			old.Score.MeanAvailMbps, before.Score.MeanAvailMbps, old.Score.T, after.Score.T)
	}
}

// TestNetload_FlowInsideSwitchLeavesUplink: the same flow inside A
// (a4 -> a3): B receives none of it, so nothing crosses an uplink, and the
// decision, every figure of it, is the one without a model.
func TestNetload_FlowInsideSwitchLeavesUplink(t *testing.T) {
	t.Parallel()
	with, without := threeSwitches(true), threeSwitches(false)
	flow(&with, "a4", "a3")
	flow(&without, "a4", "a3")
	d1, got := place6(t, with)
	d2, _ := place6(t, without)
	if !reflect.DeepEqual(d1, d2) {
		t.Fatalf("flow inside A: with the model %+v, without %+v; want the same", d1, d2)
	}
	if !spansAB(got) {
		t.Fatalf("flow inside A: placed on %s, want A and B still", got)
	}
}

// TestNetload_UplinkTestedUnderFlow: flows a4 -> b4 and b3 -> a3, 400
// Mbit/s each, were crossing when the A-B pairs were tested, so every
// test between A and B read 600 of the uplink's 1,000, and the switch
// pair's fastest test (SwPeak) is 600; C's uplink is slower here (300 of
// 400). Taking 600 for the capacity and subtracting the 400 crossing now
// counts the flows twice: 200 free, below C's 300, and netload leaves
// A+B. With what the tests carried (SwCap: each test's 600 plus the 400
// that crossed meanwhile, as the leader stamps it) the uplink has 1,000 -
// 400 = 600 free, and A+B, the better pair of switches, wins again.
func TestNetload_UplinkTestedUnderFlow(t *testing.T) {
	t.Parallel()
	underFlows := func(carried float64) placement.Snapshot {
		s := threeSwitches(true)
		isAB := func(a, b string) bool { return (a[0] == 'a' && b[0] == 'b') || (a[0] == 'b' && b[0] == 'a') }
		for i := range s.Links {
			switch l := &s.Links[i]; {
			case isAB(l.From, l.To):
				l.AvailMbps, l.PeakMbps = 600, 600
			case (l.From[0] == 'c') != (l.To[0] == 'c'):
				l.AvailMbps, l.PeakMbps = 300, 400
			}
		}
		m := s.Model
		for _, k := range []int{0*3 + 1, 1*3 + 0} {
			m.SwAvail[k], m.SwPeak[k] = 600, 600
		}
		for _, k := range []int{0*3 + 2, 2*3 + 0, 1*3 + 2, 2*3 + 1} {
			m.SwAvail[k], m.SwPeak[k] = 300, 400
		}
		if carried > 0 {
			m.SwCap = make([]float64, 9)
			m.SwCap[0*3+1], m.SwCap[1*3+0] = carried, carried
		}
		for i := range s.Nodes {
			switch s.Nodes[i].Name {
			case "a4", "b3":
				s.Nodes[i].NetTxBytesPerSec = 50e6
			case "b4", "a3":
				s.Nodes[i].NetRxBytesPerSec = 50e6
			}
		}
		return s
	}
	if _, got := place6(t, underFlows(0)); spansAB(got) {
		t.Fatalf("without what the tests carried: placed on %s; the uplink term should have counted the flows twice (200 free)", got)
	}
	d, got := place6(t, underFlows(1000))
	if !spansAB(got) {
		t.Fatalf("tests stamped with the 400 Mbit/s that crossed meanwhile: placed on %s, want A and B (600 free, C offers 300)", got)
	}
	if d.Score.MeanAvailMbps < 600 {
		t.Fatalf("A+B scored at a mean of %.0f Mbit/s: the uplink term still subtracts the flows from the tests' rate", d.Score.MeanAvailMbps)
	}
}

// TestNetload_StampNeverAboveFastestTest: what the tests carried can
// overstate an uplink (a TCP test takes bandwidth from the flows it runs
// against; the crossing traffic is an upper bound), so the uplink term
// never offers more than the fastest test between the two switches:
// here SwCap says 1,000, the fastest test 600, and 100 Mbit/s cross now.
// Every A-B pair of a group on A and B then offers at most 600, though
// their own tests read 900.
func TestNetload_StampNeverAboveFastestTest(t *testing.T) {
	t.Parallel()
	s := threeSwitches(true)
	m := s.Model
	m.SwCap = make([]float64, 9)
	for _, k := range []int{0*3 + 1, 1*3 + 0} {
		m.SwPeak[k], m.SwCap[k] = 600, 1000
	}
	for i := range s.Nodes {
		switch s.Nodes[i].Name {
		case "a4":
			s.Nodes[i].NetTxBytesPerSec = 12.5e6
		case "b4":
			s.Nodes[i].NetRxBytesPerSec = 12.5e6
		}
	}
	var hf []placement.HostSlots
	for _, h := range []string{"a1", "a2", "a3", "b1", "b2", "b3"} {
		hf = append(hf, placement.HostSlots{Host: h, Slots: 1})
	}
	d, err := placement.Place(s, placement.Request{N: 6, Policy: "netload", Force: true, Hostfile: hf, Relax: "none"})
	if err != nil {
		t.Fatal(err)
	}
	// 6 pairs inside a switch at 950, 9 across at most 600.
	if want := (6*950.0 + 9*600) / 15; d.Score.MeanAvailMbps > want+1e-9 {
		t.Fatalf("A+B's mean pair offers %.1f Mbit/s, want at most %.1f: the stamp lifted the uplink above its fastest test", d.Score.MeanAvailMbps, want)
	}
}
