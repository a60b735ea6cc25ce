package leader

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

func setProbe(w *world, node, kind, state string) {
	for i := range w.node(node).Probes {
		if b := &w.node(node).Probes[i]; b.Kind == kind {
			b.State = state
		}
	}
}

func TestProbes_Supervision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(w *world)
		want  []string
	}{
		{name: "healthy: nothing"},
		{name: "exited: relaunched", setup: func(w *world) { setProbe(w, "n2", raftfsm.ProbeLatency, probeplan.StateExited) },
			want: []string{`probe_restart {"node":"n2","kind":"latency","reason":"process exited","generation":0}`}},
		{name: "exited on a dead node: left to remove_node", setup: func(w *world) {
			setProbe(w, "n2", raftfsm.ProbeLatency, probeplan.StateExited)
			w.node("n2").Status = nodestate.StatusDead
		}},
		{name: "node behind raft's generation: not ordered twice", setup: func(w *world) {
			w.apply(raftfsm.CmdProbeRestart, raftfsm.ProbeRestart{Node: "n2", Kind: raftfsm.ProbeLatency, Reason: "x", Generation: 0})
			setProbe(w, "n2", raftfsm.ProbeLatency, probeplan.StateExited)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "n1", "n2")
			w.st.ProbeDuties = raftfsm.ProbeDuties{Cycle: 1, SetAt: w.now, RoundLen: time.Hour, Rounds: [][]raftfsm.Test{{{From: "n1", To: "n2"}}}}
			if tc.setup != nil {
				tc.setup(w)
			}
			cmds, _ := Probes(w.view(), ProbesBook{})
			if got := commands(cmds); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("commands %q, want %q", got, tc.want)
			}
		})
	}
}

// A heartbeat that stops is noticed StaleAfter later on the leader's
// clock; the Book carries when it last changed from round to round.
func TestProbes_HungProbeNeedsTheBook(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2")
	w.st.ProbeDuties = raftfsm.ProbeDuties{Cycle: 1, SetAt: w.now, RoundLen: time.Hour, Rounds: [][]raftfsm.Test{{{From: "n1", To: "n2"}}}}
	_, b := Probes(w.view(), ProbesBook{})
	w.now = w.now.Add(15 * time.Second)
	cmds, _ := Probes(w.view(), b)
	got := commands(cmds)
	if len(got) != 2*len(raftfsm.ProbeKinds) {
		t.Fatalf("commands %q, want every probe of both nodes relaunched as hung", got)
	}
	for _, c := range got {
		if !strings.Contains(c, `"reason":"no heartbeat for 15s"`) {
			t.Fatalf("commands %q, want every probe relaunched as hung", got)
		}
	}
	if cmds, _ := Probes(w.view(), ProbesBook{}); len(cmds) != 0 {
		t.Fatalf("a new leader's empty book relaunched %q at once", commands(cmds))
	}
}

func TestProbes_BandwidthCycles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2", "n3")
	w.cfg.Probes.RoundLen = 10 * time.Second
	// The schedule alone: supervision would relaunch probes whose
	// heartbeat this test does not move.
	Probes := scheduleCycle

	// No cycle yet, three members: a full cycle, recorded once raft takes it.
	cmds, b := Probes(w.view(), ProbesBook{})
	if len(cmds) != 1 || cmds[0].Type != raftfsm.CmdSetProbeDuties || cmds[0].Cycle == nil || !cmds[0].Cycle.Full ||
		cmds[0].Body.(raftfsm.SetProbeDuties).Cycle != 1 || len(cmds[0].Body.(raftfsm.SetProbeDuties).Rounds) != 3 {
		t.Fatalf("first round: %q", commands(cmds))
	}
	if len(b.CycleStart) != 0 {
		t.Fatal("cycle recorded before raft took it")
	}
	w.apply(cmds[0].Type, cmds[0].Body)
	b = b.CycleCommitted(*cmds[0].Cycle)
	if !b.CycleStart[1].Equal(t0) {
		t.Fatalf("cycle start %v", b.CycleStart)
	}

	// Mid-cycle, everyone alive: nothing. n3 dies: dropped from the rounds to come.
	w.now = t0.Add(5 * time.Second)
	if cmds, _ := Probes(w.view(), b); len(cmds) != 0 {
		t.Fatalf("mid-cycle: %q", commands(cmds))
	}
	w.node("n3").Status = nodestate.StatusDead
	cmds, _ = Probes(w.view(), b)
	if len(cmds) != 1 || cmds[0].Cycle != nil || cmds[0].Before == nil || !strings.Contains(cmds[0].Before.Msg, "dropping dead nodes") {
		t.Fatalf("dead node mid-cycle: %q", commands(cmds))
	}
	for _, r := range cmds[0].Body.(raftfsm.SetProbeDuties).Rounds[1:] {
		for _, p := range r {
			if p.From == "n3" || p.To == "n3" {
				t.Fatalf("n3 still scheduled: %q", commands(cmds))
			}
		}
	}
	w.node("n3").Status = nodestate.StatusAlive

	// The cycle ended (every pair measured), the interval not: a new
	// node's pairs are caught up, keeping the full cycle's start.
	for i := range w.nodes {
		for _, peer := range []string{"n1", "n2", "n3"} {
			if peer != w.nodes[i].Name {
				w.nodes[i].Net = append(w.nodes[i].Net, nodestate.NetEntry{Peer: peer, AvailMbps: 900, BWAt: t0.Add(20 * time.Second).UnixMilli()})
			}
		}
	}
	w.nodes = append(w.nodes, testNode("n4"))
	w.now = t0.Add(40 * time.Second)
	cmds, b2 := Probes(w.view(), b)
	if len(cmds) != 1 || cmds[0].Cycle == nil || cmds[0].Cycle.Full || !cmds[0].Cycle.Start.Equal(t0) ||
		cmds[0].After == nil || !strings.Contains(cmds[0].After.Msg, "catch-up") {
		t.Fatalf("catch-up: %q", commands(cmds))
	}
	for _, r := range cmds[0].Body.(raftfsm.SetProbeDuties).Rounds {
		for _, p := range r {
			if p.From != "n4" && p.To != "n4" {
				t.Fatalf("catch-up tests a pair measured in the cycle: %q", commands(cmds))
			}
		}
	}
	if b2.Counted != 1 || b2.Tries[probeplan.NewPair("n1", "n2")] != 1 || len(b.Tries) != 0 {
		t.Fatalf("the ended cycle's tests not counted once in the next book: counted %d tries %v (input %v)", b2.Counted, b2.Tries, b.Tries)
	}

	// Past the interval: a new full cycle.
	w.now = t0.Add(5 * time.Minute)
	cmds, _ = Probes(w.view(), b2)
	if len(cmds) != 1 || cmds[0].Cycle == nil || !cmds[0].Cycle.Full || cmds[0].Body.(raftfsm.SetProbeDuties).Cycle != 2 {
		t.Fatalf("after the interval: %q", commands(cmds))
	}
	if n := b2.CycleCommitted(*cmds[0].Cycle); len(n.Tries) != 0 || n.Counted != 0 || !n.CycleStart[2].Equal(w.now) {
		t.Fatalf("a full cycle committed must start counting over: %+v", n)
	}

	// Fewer than two members with a probe port: no cycle.
	lone := newWorld(t, "n1")
	if cmds, _ := Probes(lone.view(), ProbesBook{}); len(cmds) != 0 {
		t.Fatalf("one member: %q", commands(cmds))
	}
}

// TestProbes_TopologyCycle: on declared switches a full cycle tests each
// node's link on its own switch and each switch pair a few times, not
// every pair; with the switches undeclared, the rows of a first cycle
// are enough to infer them and plan the same way.
func TestProbes_TopologyCycle(t *testing.T) {
	t.Parallel()
	var names []string
	for s := range 3 {
		for i := range 4 {
			names = append(names, fmt.Sprintf("s%dn%d", s, i))
		}
	}
	count := func(w *world) (own, cross int) {
		cmds, _ := scheduleCycle(w.view(), ProbesBook{})
		if len(cmds) != 1 {
			t.Fatalf("want one cycle, got %q", commands(cmds))
		}
		for _, r := range cmds[0].Body.(raftfsm.SetProbeDuties).Rounds {
			for _, p := range r {
				if p.From[:2] == p.To[:2] {
					own++
				} else {
					cross++
				}
			}
		}
		return own, cross
	}
	w := newWorld(t, names...)
	for i := range w.nodes {
		w.nodes[i].Attrs.Switch = w.nodes[i].Name[:2]
	}
	if own, cross := count(w); own != 12 || cross != 3 {
		t.Fatalf("declared switches: %d own-switch and %d cross tests, want 12 and 3 (all pairs: 66)", own, cross)
	}

	// Undeclared, with rows from an all-pairs sweep: 940 Mbit/s on a
	// switch, 300 across.
	w = newWorld(t, names...)
	for i := range w.nodes {
		for _, peer := range names {
			if peer == w.nodes[i].Name {
				continue
			}
			bw := 300.0
			if peer[:2] == w.nodes[i].Name[:2] {
				bw = 940
			}
			w.nodes[i].Net = append(w.nodes[i].Net, nodestate.NetEntry{Peer: peer, AvailMbps: bw, PeakMbps: bw, BWAt: t0.UnixMilli()})
		}
	}
	if own, cross := count(w); own != 12 || cross != 3 {
		t.Fatalf("inferred switches: %d own-switch and %d cross tests, want 12 and 3", own, cross)
	}
}

// TestProbes_RecordSwitches: switches inferred from the rows are
// proposed once, not again while no newer test arrived, and not when raft
// already holds them.
func TestProbes_RecordSwitches(t *testing.T) {
	t.Parallel()
	names := []string{"a1", "a2", "a3", "b1", "b2", "b3"}
	w := newWorld(t, names...)
	w.node("b3").Attrs.Switch = "rackB" // declared: never recorded
	for i := range w.nodes {
		for _, peer := range names {
			if peer == w.nodes[i].Name {
				continue
			}
			bw := 250.0
			if peer[0] == w.nodes[i].Name[0] {
				bw = 940
			}
			w.nodes[i].Net = append(w.nodes[i].Net, nodestate.NetEntry{Peer: peer, AvailMbps: bw, PeakMbps: bw, BWAt: 1000})
		}
	}
	cmds, b := recordSwitches(w.view(), ProbesBook{})
	want := map[string]string{"a1": "~a1", "a2": "~a1", "a3": "~a1", "b1": "rackB", "b2": "rackB"}
	if len(cmds) != 1 || cmds[0].Type != raftfsm.CmdSetSwitches || fmt.Sprint(cmds[0].Body.(raftfsm.SetSwitches).Switches) != fmt.Sprint(want) {
		t.Fatalf("got %q, want set_switches %v", commands(cmds), want)
	}
	if again, _ := recordSwitches(w.view(), b); len(again) != 0 {
		t.Fatalf("proposed again with no newer test: %q", commands(again))
	}
	w.apply(cmds[0].Type, cmds[0].Body)
	w.nodes[0].Net[0].BWAt = 2000
	if again, _ := recordSwitches(w.view(), b); len(again) != 0 {
		t.Fatalf("proposed what raft holds: %q", commands(again))
	}
}

// TestProbes_CatchUpGivesUp: a node no test reaches has its pairs tried
// twice; then the catch-up finds nothing and remembers it, instead of
// rebuilding the model every round.
func TestProbes_CatchUpGivesUp(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("n%02d", i))
	}
	w := newWorld(t, append(names, "z")...)
	for i := range w.nodes[:12] {
		peer := names[(i+1)%12]
		w.nodes[i].Net = append(w.nodes[i].Net, nodestate.NetEntry{Peer: peer, AvailMbps: 900, PeakMbps: 900, BWAt: t0.UnixMilli()})
	}
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Test{{{From: "n00", To: "n01"}}}, RoundLen: time.Second})
	w.now = t0.Add(time.Minute)
	b := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}, Tries: map[probeplan.Pair]int{}, Counted: 1}
	for _, n := range names {
		b.Tries[probeplan.NewPair("z", n)] = probeplan.CatchUpTries
	}
	cmds, b := scheduleCycle(w.view(), b)
	if len(cmds) != 0 || b.CatchUpEmpty == "" {
		t.Fatalf("every pair of z tried twice: got %q, remembered %q", commands(cmds), b.CatchUpEmpty)
	}
	// A new node joins: the key changes, and the catch-up plans again.
	w.nodes = append(w.nodes, testNode("y"))
	if cmds, _ := scheduleCycle(w.view(), b); len(cmds) != 1 {
		t.Fatalf("a joiner after the empty answer: %q, want a catch-up", commands(cmds))
	}
}

// TestProbes_RetestsATestBesideTraffic: between full cycles, a pair whose
// latest test an end counted as run beside other traffic (a quarter of
// the reading or more, at either end, either direction) is tested again
// in a catch-up cycle once that end's traffic has dropped below half of
// it (not while it goes on); the same reading, still in the rows while the
// re-test's result is on its way, orders no second one, a newer one
// does, and a pair tried probeplan.RetestTries times waits for the next full
// cycle without the model being built. A test with only its headers
// besides it, or no counts, is not re-tested.
func TestProbes_RetestsATestBesideTraffic(t *testing.T) {
	t.Parallel()
	w, names, at := ringOf12(t)
	w.nodes[3].Net[0].OutMbps, w.nodes[3].Net[0].CarriedOutMbps = 49.4, 99.1 // n03 -> n04 under n03's job
	w.nodes[8].Net[0].InMbps, w.nodes[8].Net[0].CarriedInMbps = 60, 80       // n09 -> n08 into a busy n08
	both := []probeplan.Pair{{A: "n03", B: "n04"}, {A: "n08", B: "n09"}}
	pairsOf := func(cs []contended) (out []probeplan.Pair) {
		for _, c := range cs {
			if c.At != at {
				t.Errorf("%v: test time %d, want %d", c.Pair, c.At, at)
			}
			out = append(out, c.Pair)
		}
		return out
	}
	w.nodes[8].Attrs.NetRxBytesPerSec = 15e6 / 8 // n08 still receives 15 of the 20 besides
	if got := pairsOf(contendedPairs(w.nodes, names)); !slices.Equal(got, both[:1]) {
		t.Fatalf("n08 still busy: contendedPairs = %v, want %v", got, both[:1])
	}
	w.nodes[8].Attrs.NetRxBytesPerSec = 9e6 / 8 // under half: the job is gone
	if got := pairsOf(contendedPairs(w.nodes, names)); !slices.Equal(got, both) {
		t.Fatalf("contendedPairs = %v, want %v", got, both)
	}
	if got := contendedPairs(w.nodes, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "n04" })); len(got) != 1 {
		t.Fatalf("with n04 gone: %v, want only n08-n09", got)
	}
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Test{{{From: "n03", To: "n04"}}}, RoundLen: time.Second})
	w.now = t0.Add(time.Minute)
	planned := func(cmds []Command) []probeplan.Pair {
		t.Helper()
		if len(cmds) != 1 || cmds[0].Type != raftfsm.CmdSetProbeDuties {
			t.Fatalf("got %q, want a catch-up cycle", commands(cmds))
		}
		var out []probeplan.Pair
		for _, r := range cmds[0].Body.(raftfsm.SetProbeDuties).Rounds {
			for _, d := range r {
				out = append(out, probeplan.NewPair(d.From, d.To))
			}
		}
		slices.SortFunc(out, func(x, y probeplan.Pair) int { return strings.Compare(x.A+" "+x.B, y.A+" "+y.B) })
		return out
	}
	b0 := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}}
	cmds, b := scheduleCycle(w.view(), b0)
	if got := planned(cmds); !slices.Equal(got, both) {
		t.Fatalf("catch-up tests %v, want %v", got, both)
	}
	// The re-tests' results have not reached the rows yet.
	if cmds, _ := scheduleCycle(w.view(), b); len(cmds) != 0 {
		t.Fatalf("the same readings again: got %q, want no second re-test", commands(cmds))
	}
	// n03-n04's re-test ran beside traffic again, and is newer.
	w.nodes[3].Net[0].OutAt = at + 30_000
	if got := planned(mustSchedule(t, w, b)); !slices.Equal(got, both[:1]) {
		t.Fatalf("after a newer test beside traffic: %v, want %v", got, both[:1])
	}
	b.Tries = map[probeplan.Pair]int{both[0]: probeplan.RetestTries, both[1]: probeplan.RetestTries}
	b.Retested, b.CatchUpEmpty = nil, ""
	cmds, b = scheduleCycle(w.view(), b)
	if len(cmds) != 0 || b.CatchUpEmpty != "" {
		t.Fatalf("both pairs tried %d times: got %q (memo %q), want nothing, decided before the model is built",
			probeplan.RetestTries, commands(cmds), b.CatchUpEmpty)
	}
}

// TestProbes_RetestPastThePlannersBound: a node whose link's re-tests
// took it past the topology planner's per-node bound still has its pair
// read beside the peer's job tested again in the next catch-up, within
// the budget (the queue12 testbed run, where n07-n08 read 26 of 100
// Mbit/s while n08 received a job's 74 and the catch-ups passed over it).
func TestProbes_RetestPastThePlannersBound(t *testing.T) {
	t.Parallel()
	w, names, at := ringOf12(t)
	w.nodes[7].Net[0].OutMbps, w.nodes[7].Net[0].CarriedOutMbps = 26, 26.5 // n07 -> n08: n07 quiet
	w.nodes[8].Net = append(w.nodes[8].Net, nodestate.NetEntry{Peer: "n07", AvailMbps: 26, PeakMbps: 95, BWAt: at,
		OutMbps: 95, InMbps: 26, PeakOutMbps: 95, PeakInMbps: 95, OutAt: at, InAt: at, CarriedOutMbps: 96, CarriedInMbps: 100}) // n08 received 74 besides
	slices.SortFunc(w.nodes[8].Net, func(a, b nodestate.NetEntry) int { return strings.Compare(a.Peer, b.Peer) })
	pair := probeplan.NewPair("n07", "n08")
	if got := contendedPairs(w.nodes, names); len(got) != 1 || got[0].Pair != pair {
		t.Fatalf("contendedPairs = %v, want %v (n08's job gone)", got, pair)
	}
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Test{{{From: "n07", To: "n08"}}}, RoundLen: 6 * time.Second})
	w.now = t0.Add(time.Minute)
	// Since the full cycle: n07-n08's test, and one re-test of each of
	// n07's other pairs for a change its link checks read.
	tries := map[probeplan.Pair]int{pair: 1}
	for _, n := range names {
		if n != "n07" && n != "n08" {
			tries[probeplan.NewPair("n07", n)] = 1
		}
	}
	perNode := probeplan.DefaultTopoConfig().PerNode()
	if len(tries) < perNode {
		t.Fatalf("n07 took part in %d tests, the test wants at least the per-node bound %d", len(tries), perNode)
	}
	b := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}, Tries: tries, Counted: 1}
	cmds, _ := scheduleCycle(w.view(), b)
	wantCatchUpOf(t, cmds, pair)
}

// TestProbes_RetestBetweenBackToBackJobs: a test that read its share of
// a full link at a busy end is tested again once that end carries
// clearly less, before it goes quiet (jobs placed back to back rarely
// leave a node's sample quiet); not while the traffic goes on as before.
func TestProbes_RetestBetweenBackToBackJobs(t *testing.T) {
	t.Parallel()
	w, names, _ := ringOf12(t)
	w.nodes[8].Net[0].InMbps, w.nodes[8].Net[0].CarriedInMbps = 26, 100 // n09 -> n08 while n08 received 74 besides
	pair := probeplan.NewPair("n08", "n09")
	for _, tc := range []struct {
		rx   float64 // what n08 receives now, Mbit/s
		want bool
	}{{74, false}, {70, false}, {45, true}, {10, true}} {
		w.nodes[8].Attrs.NetRxBytesPerSec = tc.rx * 1e6 / 8
		got := contendedPairs(w.nodes, names)
		if tested := len(got) == 1 && got[0].Pair == pair; tested != tc.want || len(got) > 1 {
			t.Errorf("n08 receiving %v of the 74 beside the test: contendedPairs = %v, want %v: %v", tc.rx, got, pair, tc.want)
		}
	}
}

// ringOf12 is a world of n00..n11, each with one test of its successor
// read at 95 Mbit/s both ways at t0 (at, Unix ms) on quiet ends.
func ringOf12(t *testing.T) (*world, []string, int64) {
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("n%02d", i))
	}
	w := newWorld(t, names...)
	at := t0.UnixMilli()
	for i := range w.nodes {
		peer := names[(i+1)%12]
		w.nodes[i].Net = append(w.nodes[i].Net, nodestate.NetEntry{Peer: peer, AvailMbps: 95, PeakMbps: 95, BWAt: at,
			OutMbps: 95, InMbps: 95, PeakOutMbps: 95, PeakInMbps: 95, OutAt: at, InAt: at, CarriedOutMbps: 97, CarriedInMbps: 95.5})
	}
	return w, names, at
}

func mustSchedule(t *testing.T, w *world, b ProbesBook) []Command {
	t.Helper()
	cmds, _ := scheduleCycle(w.view(), b)
	return cmds
}

// TestProbes_RetestsWithinTheCycle: a test that ran beside a job which
// has gone is tested again in the next round of the cycle under way, not
// after the cycle's last round; once a cycle, never a pair the rounds
// left test anyway, and never over a node's cap.
func TestProbes_RetestsWithinTheCycle(t *testing.T) {
	t.Parallel()
	w, names, at := ringOf12(t)
	w.nodes[3].Net[0].OutMbps, w.nodes[3].Net[0].CarriedOutMbps = 41, 99.1 // n03 -> n04 beside n03's job
	w.nodes[8].Net[0].InMbps, w.nodes[8].Net[0].CarriedInMbps = 60, 80     // n09 -> n08 into a busy n08
	w.nodes[5].Net[0].OutMbps, w.nodes[5].Net[0].CarriedOutMbps = 50, 99   // n05 -> n06, n05 still busy
	w.nodes[5].Attrs.NetTxBytesPerSec = 45e6 / 8
	w.nodes[10].Net[0].OutMbps, w.nodes[10].Net[0].CarriedOutMbps = 90, 120 // n10 -> n11 beside traffic, but near the model's 95
	low := map[probeplan.Pair]float64{}
	for _, c := range contendedPairs(w.nodes, names) {
		low[c.Pair] = c.Mbps
	}
	if low[probeplan.NewPair("n03", "n04")] != 41 || low[probeplan.NewPair("n10", "n11")] != 90 {
		t.Fatalf("contended readings %v, want n03-n04 at 41 and n10-n11 at 90", low)
	}
	// Four rounds of a minute: n03-n04 ran in round 0, n08-n09 is still
	// to come in round 3; round 1 is under way.
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, RoundLen: time.Minute, Rounds: [][]raftfsm.Test{
		{{From: "n03", To: "n04"}, {From: "n05", To: "n06"}}, {{From: "n00", To: "n01"}}, {{From: "n04", To: "n07"}}, {{From: "n08", To: "n09"}}}})
	w.now = t0.Add(90 * time.Second)
	b0 := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}, Planned: map[string]uint64{}}
	for _, n := range names {
		b0.Planned[n] = 1
	}
	if cmds, _ := scheduleCycle(w.view(), ProbesBook{Planned: b0.Planned}); len(cmds) != 0 {
		t.Fatalf("a leader that did not see the cycle start: %q, want re-tests left to the catch-up", commands(cmds))
	}
	cmds, b := scheduleCycle(w.view(), b0)
	if len(cmds) != 1 || cmds[0].Type != raftfsm.CmdSetProbeDuties {
		t.Fatalf("got %q, want the cycle's rounds with a re-test", commands(cmds))
	}
	sd := cmds[0].Body.(raftfsm.SetProbeDuties)
	if sd.Cycle != 1 || len(sd.Rounds) != 3 || len(sd.Rounds[0]) != 0 {
		t.Fatalf("rounds %v of cycle %d: want the round under way kept empty and the two left", sd.Rounds, sd.Cycle)
	}
	// The re-test takes the next round; n04's test with n07 there moves on
	// to the first round where both are free.
	want := [][]raftfsm.Test{{}, {{From: "n04", To: "n03"}}, {{From: "n08", To: "n09"}, {From: "n04", To: "n07"}}}
	if !slices.EqualFunc(sd.Rounds, want, slices.Equal) {
		t.Fatalf("rounds %v, want %v (n03-n04 again in the next round; n05-n06 waits for n05's job; n08-n09 left to its round; "+
			"n10-n11 at 90 of 95 left to the catch-up)", sd.Rounds, want)
	}
	if got := b.Retested[probeplan.NewPair("n03", "n04")]; got != at {
		t.Fatalf("book's re-test of n03-n04 at %d, want the test's %d", got, at)
	}
	// Once a cycle: after its re-test, a newer reading beside traffic
	// does not order another before the catch-up. n08-n09's round was
	// dropped (say by a dead node) and its reading is still the one
	// beside traffic: it is tested again now.
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, RoundLen: time.Minute, Rounds: [][]raftfsm.Test{
		{{From: "n04", To: "n03"}}, {{From: "n00", To: "n02"}}, {{From: "n01", To: "n02"}}}})
	w.now = w.now.Add(90 * time.Second)
	w.nodes[3].Net[0].OutAt = at + 100_000
	cmds, b = scheduleCycle(w.view(), b)
	if len(cmds) != 1 {
		t.Fatalf("got %q, want n08-n09's re-test", commands(cmds))
	}
	sd = cmds[0].Body.(raftfsm.SetProbeDuties)
	want = [][]raftfsm.Test{{}, {{From: "n01", To: "n02"}, {From: "n09", To: "n08"}}}
	if !slices.EqualFunc(sd.Rounds, want, slices.Equal) {
		t.Fatalf("rounds %v, want %v: n03-n04 was tested again in this cycle already", sd.Rounds, want)
	}
	w.apply(raftfsm.CmdSetProbeDuties, sd)
	// A node at its cap takes no re-test, and the empty answer is kept.
	w.cfg.Probes.Budget = probeplan.BudgetConfig{BytesPerHour: 24 << 20, TestBytes: 1 << 20, CycleInterval: 5 * time.Minute} // 2 tests a cycle
	w.nodes[5].Attrs.NetTxBytesPerSec = 0
	cmds, b2 := scheduleCycle(w.view(), b)
	if len(cmds) != 0 || b2.CatchUpEmpty == "" {
		t.Fatalf("n05 and n06 at 2 tests of 2: got %q (memo %q), want nothing, remembered", commands(cmds), b2.CatchUpEmpty)
	}
}

// wantCatchUpOf fails t unless cmds is one catch-up that tests pair and
// nothing else.
func wantCatchUpOf(t *testing.T, cmds []Command, pair probeplan.Pair) {
	t.Helper()
	if len(cmds) != 1 || cmds[0].Type != raftfsm.CmdSetProbeDuties {
		t.Fatalf("got %q, want a catch-up testing %v again", commands(cmds), pair)
	}
	var got []probeplan.Pair
	for _, r := range cmds[0].Body.(raftfsm.SetProbeDuties).Rounds {
		for _, d := range r {
			got = append(got, probeplan.NewPair(d.From, d.To))
		}
	}
	if !slices.Equal(got, []probeplan.Pair{pair}) {
		t.Fatalf("catch-up tests %v, want %v", got, []probeplan.Pair{pair})
	}
}
