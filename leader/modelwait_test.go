package leader

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// coldWorld is a just-formed cluster of four nodes on two declared
// switches, no bandwidth measured, the model wait on.
func coldWorld(t *testing.T, wait time.Duration) *world {
	w := newWorld(t, "a1", "a2", "b1", "b2")
	for i := range w.nodes {
		w.nodes[i].Attrs.Switch = w.nodes[i].Name[:1]
	}
	w.cfg.PlacementModelWait = wait
	return w
}

// measure gives the rows of a and b a bandwidth test at now.
func measure(w *world, a, b string, mbps float64) {
	at := w.now.UnixMilli()
	w.node(a).Net = append(w.node(a).Net, nodestate.NetEntry{Peer: b, AvailMbps: mbps, PeakMbps: mbps, BWAt: at, OutMbps: mbps, InMbps: mbps})
	w.node(b).Net = append(w.node(b).Net, nodestate.NetEntry{Peer: a, AvailMbps: mbps, PeakMbps: mbps, BWAt: at, OutMbps: mbps, InMbps: mbps})
}

// The gate of a network-aware placement on a cold cluster, on the
// leader's injected clock: the job waits with a Slurm-style reason while
// the model does not cover the nodes, is placed once it does, and is
// placed anyway when the bound passes; other policies never wait.
func TestSchedule_WaitsForTheNetworkModel(t *testing.T) {
	t.Parallel()
	spec := raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none"}
	sched := func(w *world) []string {
		cmds, _ := Schedule(w.view(), JobsBook{})
		return commands(cmds)
	}

	// netload (the default policy): waits, with the count of measured nodes.
	w := coldWorld(t, 45*time.Second)
	submit(w, "j", spec)
	got := sched(w)
	if len(got) != 1 || !strings.Contains(got[0], `set_wait_reason {"id":1,"reason":"waiting for the network model: 0 of 4 nodes measured"}`) {
		t.Fatalf("cold cluster: %q, want the job waiting for the model", got)
	}
	// Half the model: a-switch nodes measured on their switch, no switch pair yet.
	w.now = w.now.Add(6 * time.Second)
	measure(w, "a1", "a2", 100)
	measure(w, "b1", "b2", 50)
	if got := sched(w); len(got) != 1 || !strings.Contains(got[0], "waiting for the network model: 0 of 4 nodes measured") {
		t.Fatalf("own links measured, no switch pair: %q, want still waiting", got)
	}
	// One test across the switches: the model covers every node; placed.
	w.now = w.now.Add(6 * time.Second)
	measure(w, "a1", "b1", 40)
	if got := sched(w); len(got) != 1 || !strings.HasPrefix(got[0], "place_job") {
		t.Fatalf("model complete: %q, want the job placed", got)
	}

	// The bound passes with nothing measured: placed with what there is,
	// though the nodes came up after the job was submitted.
	w = coldWorld(t, 45*time.Second)
	submit(w, "j", spec)
	for i := range w.nodes {
		w.nodes[i].Since = t0.Add(10 * time.Second)
	}
	w.now = w.now.Add(45*time.Second - time.Millisecond)
	if got := sched(w); len(got) != 1 || !strings.HasPrefix(got[0], "set_wait_reason") {
		t.Fatalf("just before the bound: %q, want waiting", got)
	}
	w.now = w.now.Add(time.Millisecond)
	if got := sched(w); len(got) != 1 || !strings.HasPrefix(got[0], "place_job") {
		t.Fatalf("at the bound: %q, want placed", got)
	}

	for _, tc := range []struct {
		name string
		w    func() *world
		spec raftfsm.JobSpec
	}{
		{"load policy", func() *world { return coldWorld(t, time.Minute) }, raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none", Policy: "load"}},
		{"random policy", func() *world { return coldWorld(t, time.Minute) }, raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none", Policy: "random"}},
		{"wait off (0)", func() *world { return coldWorld(t, 0) }, spec},
		{"immediate job", func() *world { return coldWorld(t, time.Minute) }, raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none", Immediate: true}},
		{"nodes alive longer than the bound (a probe that never answers)", func() *world {
			w := coldWorld(t, time.Minute)
			w.now = w.now.Add(time.Hour)
			return w
		}, spec},
		{"no node runs a bandwidth probe", func() *world {
			w := coldWorld(t, time.Minute)
			for i := range w.nodes {
				w.nodes[i].ProbePort = 0
			}
			return w
		}, spec},
	} {
		w := tc.w()
		submit(w, "j", tc.spec)
		if got := sched(w); len(got) != 1 || !strings.HasPrefix(got[0], "place_job") {
			t.Errorf("%s: %q, want placed at once", tc.name, got)
		}
	}
}

func TestCoverage(t *testing.T) {
	t.Parallel()
	w := coldWorld(t, time.Minute)
	if c := Coverage(w.st, w.nodes, nil); c.Measured != 0 || c.Total != 4 || len(c.Missing) != 4 || c.String() != "0 of 4 nodes measured" {
		t.Fatalf("cold: %+v", c)
	}
	measure(w, "a1", "a2", 100)
	measure(w, "a1", "b1", 40)
	// a1, a2: own link and the switch pair; b1 only across (its switch has
	// b2 too, so that figure is a guess); b2 nothing.
	if c := Coverage(w.st, w.nodes, nil); c.Measured != 2 || strings.Join(c.Missing, ",") != "b1,b2" {
		t.Fatalf("half: %+v", c)
	}
	if c := Coverage(w.st, w.nodes, []string{"a1", "a2"}); !c.Complete() || c.Total != 2 {
		t.Fatalf("only a1, a2: %+v", c)
	}
	// Three switches, each tested against c only: a and b each have an
	// uplink figure, so the model can derive a-b from the slower uplink,
	// but that is a guess and the a and b nodes wait for a test between
	// them; c's nodes are measured to both.
	w = newWorld(t, "a1", "a2", "b1", "b2", "c1", "c2")
	for i := range w.nodes {
		w.nodes[i].Attrs.Switch = w.nodes[i].Name[:1]
	}
	measure(w, "a1", "a2", 100)
	measure(w, "b1", "b2", 100)
	measure(w, "c1", "c2", 100)
	measure(w, "a1", "c1", 40)
	measure(w, "b1", "c2", 40)
	if c := Coverage(w.st, w.nodes, nil); c.Measured != 2 || strings.Join(c.Missing, ",") != "a1,a2,b1,b2" {
		t.Fatalf("a-b from the uplinks alone: %+v, want a and b missing", c)
	}
	measure(w, "a2", "b2", 40)
	if c := Coverage(w.st, w.nodes, nil); !c.Complete() {
		t.Fatalf("a-b tested: %+v, want complete", c)
	}
	// Without switches: direct tests of every pair.
	w = newWorld(t, "x", "y", "z")
	measure(w, "x", "y", 100)
	measure(w, "x", "z", 100)
	if c := Coverage(w.st, w.nodes, nil); c.Measured != 1 || strings.Join(c.Missing, ",") != "y,z" {
		t.Fatalf("no switches: %+v", c)
	}
}
