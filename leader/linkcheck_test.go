package leader

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// testsOf lists the pairs each round of a SetProbeDuties command tests.
func testsOf(t *testing.T, cmds []Command) [][]probeplan.Pair {
	t.Helper()
	if len(cmds) != 1 || cmds[0].Type != raftfsm.CmdSetProbeDuties {
		t.Fatalf("got %q, want one set of bandwidth duties", commands(cmds))
	}
	var out [][]probeplan.Pair
	for _, r := range cmds[0].Body.(raftfsm.SetProbeDuties).Rounds {
		var round []probeplan.Pair
		for _, d := range r {
			round = append(round, probeplan.NewPair(d.From, d.To))
		}
		out = append(out, round)
	}
	return out
}

func involving(rounds [][]probeplan.Pair, node string) (n int, first int) {
	first = -1
	for i, r := range rounds {
		for _, q := range r {
			if q.A == node || q.B == node {
				n++
				if first < 0 {
					first = i
				}
			}
		}
	}
	return n, first
}

// TestProbes_LinkChangeWithinTheCycle: a node whose link checks read its
// link slower than its pairs' tests has its pairs tested again from the
// next round of the cycle under way, once for that change; a change
// older than the pairs' tests books nothing.
func TestProbes_LinkChangeWithinTheCycle(t *testing.T) {
	t.Parallel()
	w, _, _ := ringOf12(t)
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, RoundLen: time.Minute, Rounds: [][]raftfsm.Pair{
		{{From: "n00", To: "n01"}}, {{From: "n05", To: "n06"}}, {{From: "n08", To: "n09"}}, {{From: "n10", To: "n11"}}}})
	w.now = t0.Add(90 * time.Second)
	b0 := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}, Planned: map[string]uint64{}}
	for _, n := range w.nodes {
		b0.Planned[n.Name] = 1
	}
	if cmds, _ := scheduleCycle(w.view(), b0); len(cmds) != 0 {
		t.Fatalf("no change: got %q, want nothing", commands(cmds))
	}
	since := t0.Add(70 * time.Second)
	w.node("n03").Link = probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 13, Since: since, At: since.Add(10 * time.Second)}
	cmds, b := scheduleCycle(w.view(), b0)
	rounds := testsOf(t, cmds)
	if n, first := involving(rounds, "n03"); n == 0 || first != 1 {
		t.Fatalf("rounds %v: want n03's pairs from the next round (1), got %d tests from round %d", rounds, n, first)
	}
	if !strings.Contains(cmds[0].Before.Msg, "link checks") {
		t.Fatalf("note %q, want the link checks named", cmds[0].Before.Msg)
	}
	if got := b.LinkBooked["n03"]; got != since.UnixMilli() {
		t.Fatalf("booked %d, want the change's %d", got, since.UnixMilli())
	}
	w.apply(cmds[0].Type, cmds[0].Body)
	if cmds, _ := scheduleCycle(w.view(), b); len(cmds) != 0 {
		t.Fatalf("the same change again: got %q, want nothing", commands(cmds))
	}
	// The change was seen before n03's pairs were last tested.
	w.node("n03").Link.Since = t0.Add(-time.Second)
	if cmds, _ := scheduleCycle(w.view(), b0); len(cmds) != 0 {
		t.Fatalf("a change older than the tests: got %q, want nothing", commands(cmds))
	}
}

// TestProbes_LinkChangeBetweenCycles: after the cycle, a changed link's
// pairs go into a catch-up cycle, not to the next full cycle minutes
// away; a dead node's change books nothing.
func TestProbes_LinkChangeBetweenCycles(t *testing.T) {
	t.Parallel()
	w, names, _ := ringOf12(t)
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Pair{{{From: "n03", To: "n04"}}}, RoundLen: time.Second})
	w.now = t0.Add(time.Minute)
	b0 := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}}
	if cmds, _ := scheduleCycle(w.view(), b0); len(cmds) != 0 {
		t.Fatalf("no change: got %q", commands(cmds))
	}
	since := t0.Add(40 * time.Second)
	w.node("n05").Link = probeplan.LinkVerdict{Change: probeplan.LinkFaster, Mbps: 940, Since: since, At: since}
	cmds, b := scheduleCycle(w.view(), b0)
	rounds := testsOf(t, cmds)
	n, first := involving(rounds, "n05")
	if n == 0 || first != 0 {
		t.Fatalf("catch-up %v: want n05's pairs from its first round", rounds)
	}
	if cmds[0].Cycle == nil || cmds[0].Cycle.Full || !cmds[0].Cycle.Start.Equal(t0) {
		t.Fatalf("cycle %+v: want a catch-up keeping the full cycle's start", cmds[0].Cycle)
	}
	if b.LinkBooked["n05"] != since.UnixMilli() {
		t.Fatalf("book %v, want n05 booked at its change", b.LinkBooked)
	}
	// Dead: nothing to test.
	w.node("n05").Status = StatusDead
	alive := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "n05" })
	if got, _ := linkRetests(w.nodes, alive, map[probeplan.Pair]time.Time{}, nil); len(got) != 0 {
		t.Fatalf("a dead node's pairs %v, want none", got)
	}
}

// TestSnapshot_ChangedLinkIsCapped: until its pairs are tested again, a
// link its checks read slower is taken at their reading, in every row
// that holds a pair through it; a direction tested since keeps its
// reading, and the nodes handed in are not changed.
func TestSnapshot_ChangedLinkIsCapped(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n01", "n02", "n03")
	old, since, fresh := t0.UnixMilli(), t0.Add(time.Minute), t0.Add(2*time.Minute).UnixMilli()
	cell := func(peer string, mbps float64, at int64) NetEntry {
		return NetEntry{Peer: peer, BW: mbps, Peak: mbps, BWAt: at, BWOut: mbps, BWIn: mbps, PeakOut: mbps, PeakIn: mbps, BWOutAt: at, BWInAt: at}
	}
	w.node("n01").Net = []NetEntry{cell("n02", 100, old), cell("n03", 98, old)}
	w.node("n02").Net = []NetEntry{cell("n01", 100, old), cell("n03", 10.2, fresh)}
	w.node("n03").Net = []NetEntry{cell("n01", 98, old)}
	w.node("n02").Link = probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 13, Since: since, At: since}
	snap := Snapshot(w.st, w.nodes, w.now)
	got := map[string]float64{}
	for _, l := range snap.Links {
		got[l.From+"-"+l.To] = l.AvailMbps
		if l.From+"-"+l.To == "n01-n02" && (l.PeakMbps != 13 || l.FwdMbps != 13 || l.RevMbps != 13) {
			t.Errorf("n01-n02 %+v: want every figure at 13", l)
		}
	}
	want := map[string]float64{"n01-n02": 13, "n02-n01": 13, "n02-n03": 10.2, "n01-n03": 98, "n03-n01": 98}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v Mbit/s, want %v (links %v)", k, got[k], v, got)
		}
	}
	if w.node("n01").Net[0].BW != 100 {
		t.Fatal("Snapshot changed the nodes' rows")
	}
	w.node("n02").Link.Change = probeplan.LinkFaster
	for _, l := range Snapshot(w.st, w.nodes, w.now).Links {
		if l.From == "n01" && l.To == "n02" && l.AvailMbps != 100 {
			t.Fatalf("a faster link capped: %+v", l)
		}
	}
}

// TestSnapshot_SlowLinkAfterItsFirstRetest is degrade10 on the testbed
// when netload put a job on n02 22 s after its link fell from 100 to 10
// Mbit/s: n02 the least loaded node, its link checks confirmed slower
// against n03 and n04, its pair with n10 already tested again (6.5) and
// checked since, its eight other pairs not yet. The verdict the node
// judges from those checks must still cap the eight, so the leader's
// snapshot keeps placement off n02 (the best group is then n01, n03,
// n04): the check agreeing with the re-tested pair is passed over.
func TestSnapshot_SlowLinkAfterItsFirstRetest(t *testing.T) {
	t.Parallel()
	type nodeSpec struct {
		sw   string
		mbit float64
		load float64
	}
	specs := map[string]nodeSpec{ // testbed/degrade10.json
		"n01": {"sw1", 100, 0.09}, "n02": {"sw1", 100, 0.02}, "n03": {"sw1", 100, 0.07}, "n04": {"sw1", 100, 0.06},
		"n05": {"sw1", 80, 0.10}, "n06": {"sw2", 50, 0.03}, "n07": {"sw2", 50, 0.06}, "n08": {"sw2", 50, 0.09},
		"n09": {"sw2", 50, 0.07}, "n10": {"sw2", 50, 0.04},
	}
	names := slices.Sorted(maps.Keys(specs))
	w := newWorld(t, names...)
	change := t0.Add(60 * time.Second)
	retest := change.Add(6 * time.Second)
	cell := func(peer string, mbps float64, at time.Time) NetEntry {
		ms := at.UnixMilli()
		return NetEntry{Peer: peer, RTTus: 100, RTTAt: ms, BW: mbps, Peak: mbps, BWAt: ms,
			BWOut: mbps, BWIn: mbps, PeakOut: mbps, PeakIn: mbps, BWOutAt: ms, BWInAt: ms}
	}
	for _, a := range names {
		n := w.node(a)
		n.Attrs.Switch = specs[a].sw
		n.Attrs.Cores, n.Attrs.Threads = 2, 2
		l := specs[a].load
		n.Attrs.Load = placement.Means{Now: l, M1: l, M5: l, M15: l}
		for _, b := range names {
			if a == b {
				continue
			}
			rate := min(specs[a].mbit, specs[b].mbit)
			if specs[a].sw != specs[b].sw {
				rate = min(rate, 40) // the uplink
			}
			c := cell(b, rate, t0)
			if (a == "n02" && b == "n10") || (a == "n10" && b == "n02") {
				c = cell(b, 6.5, retest)
			}
			n.Net = append(n.Net, c)
		}
	}
	at := func(d time.Duration) time.Time { return change.Add(d) }
	checks := []probeplan.LinkCheck{
		{Peer: "n01", At: at(-8 * time.Second), OutMbps: 97, InMbps: 98, RowOutMbps: 100, RowInMbps: 100, RowAt: t0},
		{Peer: "n03", At: at(2 * time.Second), OutMbps: 13.1, InMbps: 13.4, RowOutMbps: 100, RowInMbps: 100, RowAt: t0},
		{Peer: "n04", At: at(12 * time.Second), OutMbps: 12.8, InMbps: 13, RowOutMbps: 100, RowInMbps: 100, RowAt: t0},
		{Peer: "n10", At: at(22 * time.Second), OutMbps: 12, InMbps: 12.2, RowOutMbps: 6.5, RowInMbps: 6.5, RowAt: retest},
	}
	w.node("n02").Link = probeplan.JudgeLink(checks, probeplan.DefaultLinkCheckConfig())
	w.now = at(23 * time.Second)
	d, err := placement.Place(Snapshot(w.st, w.nodes, w.now), placement.Request{N: 3, PPN: 1, Policy: placement.PolicyNetload})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range d.Hosts {
		got = append(got, h.Node)
	}
	slices.Sort(got)
	if slices.Contains(got, "n02") || !slices.Equal(got, []string{"n01", "n03", "n04"}) {
		t.Fatalf("netload chose %v (pairs %+v; n02's verdict %+v), want n01 n03 n04: n02's link is at 10 Mbit/s",
			got, d.Score.PairScores, w.node("n02").Link)
	}
}
