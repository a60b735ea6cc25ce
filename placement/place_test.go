package placement_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

var allPolicies = []string{"netload", "paper", "random", "sequential", "load"}

// fourNodes: a, b lightly loaded with a good link; c, d busier; 8 cores each.
func fourNodes() placement.Snapshot {
	nodes := []placement.Node{node("a", 8, 1), node("b", 8, 1), node("c", 8, 3), node("d", 8, 3)}
	links := fullMesh(nodes, 0.5, 400, 1000)
	links[0] = link("a", "b", 0.1, 950, 1000)
	return placement.Snapshot{Nodes: nodes, Links: links}
}

func TestPlace_EveryPolicy(t *testing.T) {
	t.Parallel()
	for _, pol := range allPolicies {
		for _, tc := range []struct {
			name      string
			snap      func() placement.Snapshot
			req       placement.Request
			wait      bool
			degraded  bool
			waitMatch string
		}{
			{name: "fits", snap: fourNodes, req: placement.Request{N: 10, Oversubscribe: true}},
			{name: "exactly capacity", snap: fourNodes, req: placement.Request{N: 7*2 + 5*2, Oversubscribe: true}},
			{name: "n > capacity, oversubscribe", snap: fourNodes, req: placement.Request{N: 100, Oversubscribe: true}, degraded: true},
			{name: "n > capacity, no oversubscribe", snap: fourNodes, req: placement.Request{N: 100}, wait: true, waitMatch: "not enough free slots"},
			{name: "all dead", snap: func() placement.Snapshot {
				s := fourNodes()
				for i := range s.Nodes {
					s.Nodes[i].Alive = false
				}
				return s
			}, req: placement.Request{N: 2, Oversubscribe: true}, wait: true, waitMatch: "4 dead"},
			{name: "overloaded", snap: func() placement.Snapshot {
				s := fourNodes()
				for i := range s.Nodes {
					s.Nodes[i].Load = nodestate.Means{Now: 20, M1: 20, M5: 20, M15: 20}
				}
				return s
			}, req: placement.Request{N: 2, Oversubscribe: true}, wait: true, waitMatch: "overloaded"},
			{name: "overloaded but forced", snap: func() placement.Snapshot {
				s := fourNodes()
				for i := range s.Nodes {
					s.Nodes[i].Load = nodestate.Means{Now: 20, M1: 20, M5: 20, M15: 20}
				}
				return s
			}, req: placement.Request{N: 2, Oversubscribe: true, Force: true}, degraded: pol != "paper"},
			{name: "ppn", snap: fourNodes, req: placement.Request{N: 6, PPN: 2, Oversubscribe: true}},
		} {
			t.Run(pol+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				r := tc.req
				r.Policy = pol
				d, err := placement.Place(tc.snap(), r)
				if err != nil {
					t.Fatal(err)
				}
				if d.Wait != tc.wait {
					t.Fatalf("wait = %v (%s), want %v; hosts %s", d.Wait, d.WaitReason, tc.wait, hostsString(d))
				}
				if tc.wait {
					if !strings.Contains(d.WaitReason, tc.waitMatch) {
						t.Errorf("wait reason %q does not mention %q", d.WaitReason, tc.waitMatch)
					}
					return
				}
				if total(d) != r.N {
					t.Errorf("placed %d, want %d: %s", total(d), r.N, hostsString(d))
				}
				if d.Degraded != tc.degraded {
					t.Errorf("degraded = %v (%s), want %v", d.Degraded, d.DegradedReason, tc.degraded)
				}
				if r.PPN > 0 && !d.Degraded {
					for _, h := range d.Hosts {
						if h.NP > r.PPN {
							t.Errorf("%s has %d > ppn %d", h.Node, h.NP, r.PPN)
						}
					}
				}
			})
		}
	}
}

// The network-aware policies take the well-linked idle pair.
func TestPlace_NetworkAwarePicksGoodPair(t *testing.T) {
	t.Parallel()
	for _, pol := range []string{"netload", "paper"} {
		d, err := placement.Place(fourNodes(), placement.Request{N: 12, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		if got := hostsString(d); got != "a:7 b:5 " && got != "b:7 a:5 " {
			t.Errorf("%s: %s, want a and b", pol, got)
		}
	}
}

// An unmeasured pair must not look like a perfect link.
func TestPlace_MissingLinkIsPenalised(t *testing.T) {
	t.Parallel()
	nodes := []placement.Node{node("a", 4, 0), node("b", 4, 0), node("c", 4, 0), node("d", 4, 0)}
	var links []placement.Link
	for _, l := range fullMesh(nodes, 0.3, 500, 1000) {
		if l.From == "c" && l.To == "d" {
			continue // c-d never measured
		}
		if l.From == "a" && l.To == "b" {
			l = link("a", "b", 0.1, 990, 1000)
		}
		links = append(links, l)
	}
	// b-a measured only in the other direction is still a measurement
	for _, pol := range []string{"netload", "paper"} {
		d, err := placement.Place(placement.Snapshot{Nodes: nodes, Links: links}, placement.Request{N: 8, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		names := []string{d.Hosts[0].Node, d.Hosts[1].Node}
		slices.Sort(names)
		if names[0] != "a" || names[1] != "b" {
			t.Errorf("%s chose %v, want the measured good pair a, b", pol, names)
		}
	}
}

// Identical nodes: the lowest names win, whatever the snapshot order.
func TestPlace_DeterministicTies(t *testing.T) {
	t.Parallel()
	mk := func(order []string) placement.Snapshot {
		var nodes []placement.Node
		for _, n := range order {
			nodes = append(nodes, node(n, 4, 0))
		}
		return placement.Snapshot{Nodes: nodes, Links: fullMesh(nodes, 0.2, 800, 1000)}
	}
	for _, pol := range []string{"netload", "paper", "load"} {
		d1, err1 := placement.Place(mk([]string{"n3", "n1", "n4", "n2"}), placement.Request{N: 8, Policy: pol})
		d2, err2 := placement.Place(mk([]string{"n2", "n4", "n1", "n3"}), placement.Request{N: 8, Policy: pol})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if hostsString(d1) != hostsString(d2) || hostsString(d1) != "n1:4 n2:4 " {
			t.Errorf("%s: %q vs %q, want n1:4 n2:4", pol, hostsString(d1), hostsString(d2))
		}
	}
}

func TestPlace_PEFilter(t *testing.T) {
	t.Parallel()
	s := fourNodes()
	s.Nodes[2].PEs = []nodestate.PE{{Kind: "gpu", Model: "T4", Count: 2}}
	s.Nodes[3].PEs = []nodestate.PE{{Kind: "gpu", Model: "T4", Count: 1}}
	for _, pol := range allPolicies {
		d, err := placement.Place(s, placement.Request{N: 3, Policy: pol, PEs: []placement.PENeed{{Kind: "GPU", PerProc: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if hostsString(d) != "c:2 d:1 " && hostsString(d) != "d:1 c:2 " {
			t.Errorf("%s: %s, want c:2 d:1 (GPU nodes, one GPU per process)", pol, hostsString(d))
		}
		d, _ = placement.Place(s, placement.Request{N: 4, Policy: pol, PEs: []placement.PENeed{{Kind: "fpga", PerProc: 1}}})
		if !d.Wait || !strings.Contains(d.WaitReason, "fpga") {
			t.Errorf("%s: no fpga anywhere: wait %v %q", pol, d.Wait, d.WaitReason)
		}
	}
}

func TestPlace_RelaxModes(t *testing.T) {
	t.Parallel()
	hf := []placement.HostSlots{{Host: "c", Slots: 3}, {Host: "d", Slots: 1}}
	for _, tc := range []struct {
		relax string
		n     int
		check func(t *testing.T, d placement.Decision)
	}{
		{"none", 0, func(t *testing.T, d placement.Decision) {
			if hostsString(d) != "c:3 d:1 " {
				t.Errorf("none keeps hosts and counts: %s", hostsString(d))
			}
		}},
		{"", 0, func(t *testing.T, d placement.Decision) {
			if d.Score.Relax != "none" || hostsString(d) != "c:3 d:1 " {
				t.Errorf("default with hostfile is none: %s %s", d.Score.Relax, hostsString(d))
			}
		}},
		{"loc", 0, func(t *testing.T, d placement.Decision) {
			var counts []int
			for _, h := range d.Hosts {
				counts = append(counts, h.NP)
			}
			slices.Sort(counts)
			if !slices.Equal(counts, []int{1, 3}) || strings.Contains(hostsString(d), "c:") {
				t.Errorf("loc keeps counts 3,1 and moves to the better a, b: %s", hostsString(d))
			}
		}},
		{"dist", 8, func(t *testing.T, d placement.Decision) {
			if hostsString(d) != "c:4 d:4 " {
				t.Errorf("dist keeps hosts, spreads round-robin: %s", hostsString(d))
			}
		}},
		{"loc+dist", 8, func(t *testing.T, d placement.Decision) {
			if len(d.Hosts) != 2 || strings.Contains(hostsString(d), "c:") {
				t.Errorf("loc+dist keeps the node count (2), picks a, b: %s", hostsString(d))
			}
		}},
		{"all", 8, func(t *testing.T, d placement.Decision) {
			if hostsString(d) != "a:7 b:1 " {
				t.Errorf("all ignores the hostfile: %s", hostsString(d))
			}
		}},
	} {
		t.Run(tc.relax, func(t *testing.T) {
			t.Parallel()
			d, err := placement.Place(fourNodes(), placement.Request{N: tc.n, Relax: tc.relax, Hostfile: hf, Oversubscribe: true})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.n
			if want == 0 {
				want = 4
			}
			if total(d) != want {
				t.Errorf("total %d, want %d", total(d), want)
			}
			tc.check(t, d)
		})
	}
}

func TestPlace_HostfileOversubscription(t *testing.T) {
	t.Parallel()
	hf := []placement.HostSlots{{Host: "c", Slots: 20}}
	d, err := placement.Place(fourNodes(), placement.Request{Relax: "none", Hostfile: hf, Oversubscribe: true})
	if err != nil || !d.Degraded || total(d) != 20 {
		t.Fatalf("oversubscribed none: err %v degraded %v total %d", err, d.Degraded, total(d))
	}
	d, err = placement.Place(fourNodes(), placement.Request{Relax: "none", Hostfile: hf})
	if err != nil || !d.Wait || !strings.Contains(d.WaitReason, "oversubscri") {
		t.Fatalf("no oversubscription: err %v wait %v %q", err, d.Wait, d.WaitReason)
	}
	// repeated hosts become one launch unit
	d, err = placement.Place(fourNodes(), placement.Request{Hostfile: []placement.HostSlots{{Host: "a", Slots: 1}, {Host: "a", Slots: 2}}})
	if err != nil || hostsString(d) != "a:3 " {
		t.Fatalf("merged launch unit: %v %s", err, hostsString(d))
	}
}

func TestPlace_InvalidInput(t *testing.T) {
	t.Parallel()
	dead := fourNodes()
	dead.Nodes[2].Alive = false
	for _, tc := range []struct {
		name string
		snap placement.Snapshot
		req  placement.Request
		is   error
		msg  string
	}{
		{"n zero", fourNodes(), placement.Request{}, placement.ErrInvalidRequest, "n = 0"},
		{"n negative", fourNodes(), placement.Request{N: -1}, placement.ErrInvalidRequest, "n = -1"},
		{"unknown policy", fourNodes(), placement.Request{N: 1, Policy: "best"}, placement.ErrInvalidRequest, "policy"},
		{"oracle via Place", fourNodes(), placement.Request{N: 1, Policy: "oracle"}, placement.ErrInvalidRequest, "Oracle"},
		{"unknown relax", fourNodes(), placement.Request{N: 1, Relax: "some"}, placement.ErrInvalidRequest, "relax"},
		{"relax needs hostfile", fourNodes(), placement.Request{N: 1, Relax: "dist"}, placement.ErrInvalidRequest, "hostfile"},
		{"alpha > 1", fourNodes(), placement.Request{N: 1, Alpha: 2}, placement.ErrInvalidRequest, "alpha"},
		{"alpha NaN", fourNodes(), placement.Request{N: 1, Alpha: math.NaN()}, placement.ErrInvalidRequest, "alpha"},
		{"unknown host", fourNodes(), placement.Request{Hostfile: []placement.HostSlots{{Host: "zz", Slots: 1}}}, placement.ErrUnknownHost, `"zz"`},
		{"dead host, none", dead, placement.Request{Hostfile: []placement.HostSlots{{Host: "c", Slots: 1}}}, placement.ErrDeadHost, `"c"`},
		{"dead host, dist", dead, placement.Request{N: 2, Relax: "dist", Hostfile: []placement.HostSlots{{Host: "c", Slots: 1}}}, placement.ErrDeadHost, `"c"`},
		{"n differs from hostfile, none", fourNodes(), placement.Request{N: 5, Hostfile: []placement.HostSlots{{Host: "a", Slots: 1}}}, placement.ErrInvalidRequest, "n = 5"},
		{"NaN load", func() placement.Snapshot { s := fourNodes(); s.Nodes[1].Load.M5 = math.NaN(); return s }(), placement.Request{N: 1}, placement.ErrInvalidSnapshot, `"b": load`},
		{"negative util", func() placement.Snapshot { s := fourNodes(); s.Nodes[0].CPUUtil.Now = -1; return s }(), placement.Request{N: 1}, placement.ErrInvalidSnapshot, "cpu_util"},
		{"infinite MHz", func() placement.Snapshot { s := fourNodes(); s.Nodes[0].MHz = math.Inf(1); return s }(), placement.Request{N: 1}, placement.ErrInvalidSnapshot, "mhz"},
		{"negative held", func() placement.Snapshot { s := fourNodes(); s.Nodes[0].HeldSlots = -2; return s }(), placement.Request{N: 1}, placement.ErrInvalidSnapshot, "negative"},
		{"NaN link", func() placement.Snapshot { s := fourNodes(); s.Links[2].AvailMbps = math.NaN(); return s }(), placement.Request{N: 1}, placement.ErrInvalidSnapshot, "avail_mbps"},
		{"duplicate node", func() placement.Snapshot { s := fourNodes(); s.Nodes[1].Name = "a"; return s }(), placement.Request{N: 1}, placement.ErrInvalidSnapshot, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := placement.Place(tc.snap, tc.req)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.is, tc.msg)
			}
		})
	}
	// a dead host is fine where location is relaxed
	d, err := placement.Place(dead, placement.Request{Relax: "loc", Hostfile: []placement.HostSlots{{Host: "c", Slots: 2}}})
	if err != nil || total(d) != 2 || strings.Contains(hostsString(d), "c:") {
		t.Fatalf("loc with a dead host: %v %s", err, hostsString(d))
	}
}

func TestOracle(t *testing.T) {
	t.Parallel()
	d, err := placement.Oracle(fourNodes(), placement.Request{N: 12})
	if err != nil || (hostsString(d) != "a:7 b:5 " && hostsString(d) != "b:7 a:5 ") {
		t.Fatalf("oracle: %v %s", err, hostsString(d))
	}
	var nodes []placement.Node
	for i := range placement.OracleMaxNodes + 1 {
		nodes = append(nodes, node(string(rune('a'+i)), 4, 0))
	}
	if _, err := placement.Oracle(placement.Snapshot{Nodes: nodes}, placement.Request{N: 4}); !errors.Is(err, placement.ErrTooLarge) {
		t.Fatalf("oracle on %d nodes: %v, want ErrTooLarge", len(nodes), err)
	}
}

// TestPlace_StoppedWorkStopsCounting: a node whose job has just ended
// (its latest sample idle, its 1-, 5- and 15-minute means still full) is
// free now, and netload takes it over two nodes that stay half busy.
func TestPlace_StoppedWorkStopsCounting(t *testing.T) {
	t.Parallel()
	nodes := []placement.Node{node("a", 2, 2), node("b", 2, 0.5), node("c", 2, 0.5)}
	nodes[0].Load.Now = 0
	snap := placement.Snapshot{Nodes: nodes, Links: fullMesh(nodes, 0.1, 1000, 1000)}
	d, err := placement.Place(snap, placement.Request{N: 2, Policy: "netload"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(hostsString(d)); got != "a:2" {
		t.Fatalf("netload placed %s (%s), want a:2: the load that stopped still counted", got, d.WaitReason)
	}
}
