package leader

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// A forming cluster: the first bandwidth cycle waits until no member has
// joined for Settle and every one runs a bandwidth probe (at most
// 4×Settle after the first was seen); Settle 0 plans it at once.
func TestProbes_FirstCycleSettles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2", "n3")
	w.cfg.Probes.Settle = 3 * time.Second
	w.node("n3").Since = t0.Add(2 * time.Second) // joined later
	w.now = t0.Add(4 * time.Second)
	if cmds, _ := scheduleCycle(w.view(), ProbesBook{}); len(cmds) != 0 {
		t.Fatalf("1 s after the last join: %q, want no cycle yet", commands(cmds))
	}
	w.now = t0.Add(5 * time.Second)
	if cmds, _ := scheduleCycle(w.view(), ProbesBook{}); len(cmds) != 1 {
		t.Fatalf("settled: %q, want the first cycle", commands(cmds))
	}
	// A member without a probe port holds it back, for at most 4×Settle.
	w.node("n3").ProbePort = 0
	if cmds, _ := scheduleCycle(w.view(), ProbesBook{}); len(cmds) != 0 {
		t.Fatalf("n3's probe not up: %q, want no cycle yet", commands(cmds))
	}
	w.now = t0.Add(12 * time.Second)
	if cmds, _ := scheduleCycle(w.view(), ProbesBook{}); len(cmds) != 1 {
		t.Fatalf("4×Settle after the first member: %q, want the cycle without n3", commands(cmds))
	}
	w.cfg.Probes.Settle = 0
	w.now = t0
	if cmds, _ := scheduleCycle(w.view(), ProbesBook{}); len(cmds) != 1 {
		t.Fatalf("Settle 0: %q, want the cycle at once", commands(cmds))
	}
}

// A node that joins while the first cycle runs gets its own-switch tests
// merged into the rounds left, once; a new leader, which does not know
// whom the cycle was planned for, leaves it to the catch-up.
func TestProbes_JoinerAddedToTheCycleUnderWay(t *testing.T) {
	t.Parallel()
	names := []string{"a1", "a2", "a3", "b1", "b2", "b3"}
	w := newWorld(t, names...)
	for i := range w.nodes {
		w.nodes[i].Attrs.Switch = w.nodes[i].Name[:1]
	}
	joiner := testNode("a4")
	joiner.Attrs.Switch = "a"
	cmds, b := scheduleCycle(w.view(), ProbesBook{})
	if len(cmds) != 1 {
		t.Fatalf("first cycle: %q", commands(cmds))
	}
	w.apply(cmds[0].Type, cmds[0].Body)
	b = b.CycleCommitted(*cmds[0].Cycle)

	w.now = t0.Add(7 * time.Second) // round 1 of 6 s rounds
	joiner.Since = w.now
	w.nodes = append(w.nodes, joiner)
	cmds, b2 := scheduleCycle(w.view(), b)
	if len(cmds) != 1 || cmds[0].Before == nil || !strings.Contains(cmds[0].Before.Msg, "joined") {
		t.Fatalf("joiner mid-cycle: %q, want it added", commands(cmds))
	}
	body := cmds[0].Body.(raftfsm.SetProbeDuties)
	if body.Cycle != 1 || len(body.Rounds[0]) != 0 {
		t.Fatalf("want cycle 1 with the round under way kept empty: %+v", body)
	}
	n := 0
	for _, r := range body.Rounds {
		for _, p := range r {
			if p.From == "a4" || p.To == "a4" {
				n++
				if other := p.From + p.To; !strings.HasPrefix(strings.ReplaceAll(other, "a4", ""), "a") {
					t.Fatalf("joiner's test %v is not on its own switch", p)
				}
			}
		}
	}
	if n != 2 {
		t.Fatalf("joiner in %d tests, want its 2 ring neighbours: %+v", n, body.Rounds)
	}
	w.apply(cmds[0].Type, cmds[0].Body)
	if cmds, _ := scheduleCycle(w.view(), b2); len(cmds) != 0 {
		t.Fatalf("joiner already added: %q, want nothing", commands(cmds))
	}
	// A new leader's empty book: nothing mid-cycle.
	w2 := newWorld(t, names...)
	w2.st = w.st
	w2.nodes = w.nodes
	w2.now = w.now
	w2.st.ProbeDuties.Rounds = w2.st.ProbeDuties.Rounds[:1]
	if cmds, _ := scheduleCycle(w2.view(), ProbesBook{}); len(cmds) != 0 {
		t.Fatalf("new leader mid-cycle: %q, want nothing", commands(cmds))
	}
}
