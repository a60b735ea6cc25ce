package placement_test

import (
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// twoSwitches: a1-a3 on a fast switch (950 of 1,000 Mbit/s free), b1-b3
// on a slower one (450 of 500), 100 Mbit/s between the switches; one
// core each, so a 3-process job takes three nodes.
func twoSwitches() placement.Snapshot {
	var s placement.Snapshot
	for _, n := range []string{"a1", "a2", "a3", "b1", "b2", "b3"} {
		nd := node(n, 1, 0)
		nd.Switch = "sw" + n[:1]
		s.Nodes = append(s.Nodes, nd)
	}
	for i, a := range s.Nodes {
		for _, b := range s.Nodes[i+1:] {
			switch {
			case a.Switch != b.Switch:
				s.Links = append(s.Links, link(a.Name, b.Name, 0.2, 90, 100), link(b.Name, a.Name, 0.2, 90, 100))
			case a.Switch == "swa":
				s.Links = append(s.Links, link(a.Name, b.Name, 0.1, 950, 1000), link(b.Name, a.Name, 0.1, 950, 1000))
			default:
				s.Links = append(s.Links, link(a.Name, b.Name, 0.1, 450, 500), link(b.Name, a.Name, 0.1, 450, 500))
			}
		}
	}
	return s
}

func place3(t *testing.T, s placement.Snapshot) string {
	t.Helper()
	d, err := placement.Place(s, placement.Request{N: 3, Policy: "netload", Force: true})
	if err != nil || d.Wait {
		t.Fatalf("place: %+v %v", d, err)
	}
	return hostsString(d)
}

// TestNetload_SaturatedDirectionFromTraffic: the contention case.
// The bandwidth tests ran before a bulk flow a1 -> a2 started, so every
// test still says the fast switch is free; the next traffic sample shows
// a1 sending and a2 receiving at line rate, and netload leaves the fast
// switch (every 3-node group there holds a1 and a2). A flow one way only:
// a1 receives nothing and a2 sends nothing.
func TestNetload_SaturatedDirectionFromTraffic(t *testing.T) {
	t.Parallel()
	s := twoSwitches()
	if got := place3(t, s); !strings.Contains(got, "a1") || strings.Contains(got, "b") {
		t.Fatalf("quiet cluster: placed on %s, want the fast switch", got)
	}
	for i := range s.Nodes {
		switch s.Nodes[i].Name {
		case "a1":
			s.Nodes[i].NetTxBytesPerSec = 120e6 // bytes/s: 960 Mbit/s out
		case "a2":
			s.Nodes[i].NetRxBytesPerSec = 120e6
		}
	}
	if got := place3(t, s); strings.Contains(got, "a") {
		t.Fatalf("a1 -> a2 saturated: placed on %s, want the quiet switch b", got)
	}
}

// TestNetload_WorseDirectionCounts: the fast switch's links are shaped to
// 10 Mbit/s in one direction (b -> a only: the row of each a-node says Out
// 950, In 10). A test in one direction standing for both would see 950;
// netload takes the worse direction and leaves the switch.
func TestNetload_WorseDirectionCounts(t *testing.T) {
	t.Parallel()
	s := twoSwitches()
	for k := range s.Links {
		l := &s.Links[k]
		if l.From[0] != 'a' || l.To[0] != 'a' {
			continue
		}
		// Each row's view: From sends fast when From < To, slowly otherwise.
		fwd, rev := float32(950), float32(10)
		if l.From > l.To {
			fwd, rev = 10, 950
		}
		l.OutMbps, l.InMbps, l.PeakOutMbps, l.PeakInMbps = fwd, rev, 10*fwd/9.5, 10*rev/9.5
		l.AvailMbps = float64(min(fwd, rev))
	}
	if got := place3(t, s); strings.Contains(got, "a") {
		t.Fatalf("one direction at 10 Mbit/s: placed on %s, want switch b", got)
	}
	// The directions alone, with the undirected field left at the fast
	// direction (a row from before this change): still the worse direction.
	for k := range s.Links {
		if l := &s.Links[k]; l.From[0] == 'a' && l.To[0] == 'a' {
			l.AvailMbps = 950
		}
	}
	if got := place3(t, s); strings.Contains(got, "a") {
		t.Fatalf("directions set, AvailMbps the fast one: placed on %s, want switch b", got)
	}
}

func TestValidate_DirectionalFields(t *testing.T) {
	t.Parallel()
	s := twoSwitches()
	s.Links[0].InMbps = -1
	if _, err := placement.Place(s, placement.Request{N: 3}); err == nil || !strings.Contains(err.Error(), "in_mbps") {
		t.Fatalf("negative in_mbps: %v", err)
	}
	s = twoSwitches()
	s.Nodes[0].NetTxBytesPerSec = -5
	if _, err := placement.Place(s, placement.Request{N: 3}); err == nil || !strings.Contains(err.Error(), "net rx, tx") {
		t.Fatalf("negative tx: %v", err)
	}
}
