package probes

import (
	"fmt"
	"testing"

	"github.com/shoal-hpc/shoal/agent/probes/child"
)

func cands(n int, sw func(i int) string, coord func(i int) (bool, float64)) []latencyCandidate {
	var out []latencyCandidate
	for i := range n {
		c := latencyCandidate{Peer: child.Peer{Name: fmt.Sprintf("n%03d", i), Addr: "x"}, Switch: sw(i)}
		c.Coord, c.CoordErr = coord(i)
		out = append(out, c)
	}
	return out
}

func TestChooseLatencyPeers(t *testing.T) {
	t.Parallel()
	settled := func(int) (bool, float64) { return true, 0.1 }
	bySwitch := func(i int) string { return fmt.Sprintf("s%d", i/32) }
	names := func(ps []child.Peer) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[p.Name] = true
		}
		return m
	}

	// Small cluster: every peer, as before the bound.
	small := cands(15, bySwitch, settled)
	if got := chooseLatencyPeers("n999", "s0", small, 16); len(got) != 15 {
		t.Fatalf("15 peers under a bound of 16: pinged %d", len(got))
	}

	// 1,000 nodes on switches of 32: the bound holds, own switch first.
	big := cands(1000, bySwitch, settled)
	self := big[40].Name // on s1
	big = append(big[:40], big[41:]...)
	got := chooseLatencyPeers(self, "s1", big, 16)
	if len(got) != 16 {
		t.Fatalf("pinged %d, want the bound 16", len(got))
	}
	for _, p := range got {
		var i int
		fmt.Sscanf(p.Name, "n%d", &i)
		if bySwitch(i) != "s1" {
			t.Fatalf("%s is not on s1 though s1 has 31 other nodes: %v", p.Name, got)
		}
	}

	// Uncertain coordinates come after the own switch, before the rest.
	unc := cands(100, func(i int) string { return fmt.Sprintf("s%d", i/10) }, func(i int) (bool, float64) {
		switch {
		case i == 70:
			return false, 0 // no coordinate at all
		case i == 80:
			return true, 1.5 // a fresh coordinate
		}
		return true, 0.1
	})
	got = chooseLatencyPeers("n005", "s0", append(unc[:5], unc[6:]...), 12)
	m := names(got)
	for i := range 10 {
		if n := fmt.Sprintf("n%03d", i); i != 5 && !m[n] {
			t.Fatalf("own-switch %s missing: %v", n, got)
		}
	}
	if !m["n070"] || !m["n080"] || len(got) != 12 {
		t.Fatalf("uncertain coordinates not pinged: %v", got)
	}

	// Unknown switch: ring neighbours, bounded.
	got = chooseLatencyPeers("n500", "", cands(1000, func(int) string { return "" }, settled), 8)
	if len(got) != 8 || !names(got)["n501"] || !names(got)["n499"] {
		t.Fatalf("unknown switch: %v, want 8 ring neighbours of n500", got)
	}
}

func TestConfigValidate_LatencyPeers(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.LatencyPeers = -1
	if err := c.Validate(); err == nil || err.Error() != "latency peers -1 is outside 0-4096: pass at most 4096, or 0 for the default 16" {
		t.Fatalf("got %v", err)
	}
	c.LatencyPeers = 0
	if err := c.Validate(); err != nil {
		t.Fatalf("0 means the default: %v", err)
	}
}
