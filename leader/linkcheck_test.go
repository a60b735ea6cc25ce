package leader

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
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
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, RoundLen: time.Minute, Rounds: [][]raftfsm.Test{
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
	for _, q := range slices.Concat(rounds...) {
		if q.A != "n03" && q.B != "n03" {
			continue
		}
		if tr := b.LinkTries[q]; tr.Change != since.UnixMilli() || tr.Tries != 1 {
			t.Fatalf("%v booked within the cycle: tries %+v, want one for the change", q, tr)
		}
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
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Test{{{From: "n03", To: "n04"}}}, RoundLen: time.Second})
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
	w.node("n05").Status = nodestate.StatusDead
	alive := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "n05" })
	if got := linkRetests(w.nodes, alive, map[probeplan.Pair]time.Time{}, ProbesBook{}, w.now, true).Pairs; len(got) != 0 {
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
	cell := func(peer string, mbps float64, at int64) nodestate.NetEntry {
		return nodestate.NetEntry{Peer: peer, AvailMbps: mbps, PeakMbps: mbps, BWAt: at, OutMbps: mbps, InMbps: mbps, PeakOutMbps: mbps, PeakInMbps: mbps, OutAt: at, InAt: at}
	}
	w.node("n01").Net = []nodestate.NetEntry{cell("n02", 100, old), cell("n03", 98, old)}
	w.node("n02").Net = []nodestate.NetEntry{cell("n01", 100, old), cell("n03", 10.2, fresh)}
	w.node("n03").Net = []nodestate.NetEntry{cell("n01", 98, old)}
	w.node("n02").Link = probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 13, Since: since, At: since}
	snap := Snapshot(w.st, w.nodes, w.now)
	got := map[string]float64{}
	for _, l := range snap.Links {
		got[l.From+"-"+l.To] = l.AvailMbps
		if l.From+"-"+l.To == "n01-n02" && (l.PeakMbps != 13 || l.OutMbps != 13 || l.InMbps != 13) {
			t.Errorf("n01-n02 %+v: want every figure at 13", l)
		}
	}
	want := map[string]float64{"n01-n02": 13, "n02-n01": 13, "n02-n03": 10.2, "n01-n03": 98, "n03-n01": 98}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v Mbit/s, want %v (links %v)", k, got[k], v, got)
		}
	}
	if w.node("n01").Net[0].AvailMbps != 100 {
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
	cell := func(peer string, mbps float64, at time.Time) nodestate.NetEntry {
		ms := at.UnixMilli()
		return nodestate.NetEntry{Peer: peer, RTT1us: 100, RTTAt: ms, AvailMbps: mbps, PeakMbps: mbps, BWAt: ms,
			OutMbps: mbps, InMbps: mbps, PeakOutMbps: mbps, PeakInMbps: mbps, OutAt: ms, InAt: ms}
	}
	for _, a := range names {
		n := w.node(a)
		n.Attrs.Switch = specs[a].sw
		n.Attrs.Cores, n.Attrs.Threads = 2, 2
		l := specs[a].load
		n.Attrs.Load = nodestate.Means{Now: l, M1: l, M5: l, M15: l}
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

// TestProbes_FailedLinkRetestIsBookedAgain: a changed link's pair whose
// re-test did not land is booked again in a later catch-up, after the
// node's verdict has ended, not as the catch-up that tested it ends but a
// round after its round; up to probeplan.RetestTries tries per change,
// and a later change counts afresh. A pair that landed is not booked
// again.
func TestProbes_FailedLinkRetestIsBookedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2", "n3", "n4")
	names := []string{"n1", "n2", "n3", "n4"}
	at := t0.UnixMilli()
	for i, a := range names {
		for _, b := range names[i+1:] {
			w.node(a).Net = append(w.node(a).Net, nodestate.NetEntry{Peer: b, AvailMbps: 940, PeakMbps: 940, BWAt: at})
		}
	}
	w.apply(raftfsm.CmdSetProbeDuties, raftfsm.SetProbeDuties{Cycle: 1, Rounds: [][]raftfsm.Test{{{From: "n1", To: "n2"}}}, RoundLen: 6 * time.Second})
	b := ProbesBook{CycleStart: map[uint64]time.Time{1: t0}}
	w.now = t0.Add(time.Minute)
	change := t0.Add(30 * time.Second)
	w.node("n3").Link = probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 13, Since: change, At: w.now}

	booked := map[probeplan.Pair]int{}
	// catchUp runs the leader's round at now and records what it booked;
	// it returns the catch-up's rounds and when they end.
	catchUp := func() ([][]probeplan.Pair, time.Time) {
		t.Helper()
		cmds, next := scheduleCycle(w.view(), b)
		if len(cmds) == 0 {
			b = next
			return nil, w.now
		}
		rounds := testsOf(t, cmds)
		w.apply(cmds[0].Type, cmds[0].Body)
		b = next.CycleCommitted(*cmds[0].Cycle)
		for _, r := range rounds {
			for _, q := range r {
				booked[q]++
			}
		}
		return rounds, w.now.Add(time.Duration(len(rounds)) * 6 * time.Second)
	}
	first, end := catchUp()
	if n, _ := involving(first, "n3"); n != 3 || len(first) != 3 {
		t.Fatalf("first catch-up %v: want n3's three pairs, a round each", first)
	}
	// The verdict ends; n1-n3's re-test lands, the others' do not.
	w.node("n3").Link = probeplan.LinkVerdict{}
	landed := probeplan.NewPair("n1", "n3")
	w.node("n1").Net[1] = nodestate.NetEntry{Peer: "n3", AvailMbps: 13, PeakMbps: 13, BWAt: end.UnixMilli()}
	w.now = end
	got, end2 := catchUp()
	lastRound := first[len(first)-1][0]
	var want []probeplan.Pair
	for _, r := range first[:len(first)-1] {
		if r[0] != landed {
			want = append(want, r[0])
		}
	}
	if flat := slices.Concat(got...); !slices.Equal(flat, want) {
		t.Fatalf("as the catch-up ends: got %v, want %v again (landed %v; %v's round only just ended)", got, want, landed, lastRound)
	}
	w.now = end2.Add(6 * time.Second)
	for range 2 * probeplan.RetestTries {
		if _, e := catchUp(); e.After(w.now) {
			w.now = e.Add(6 * time.Second)
		} else {
			w.now = w.now.Add(6 * time.Second)
		}
	}
	if !w.now.Before(t0.Add(5 * time.Minute)) {
		t.Fatalf("the test ran into the next full cycle (%v)", w.now.Sub(t0))
	}
	for q, n := range booked {
		switch {
		case q == landed && n != 1:
			t.Errorf("%v landed on its first re-test, booked %d times", q, n)
		case q != landed && n != probeplan.RetestTries:
			t.Errorf("%v never landed: booked %d times, want %d (booked %v)", q, n, probeplan.RetestTries, booked)
		}
	}
	// A later change of n3 counts its tries afresh.
	later := w.now.Add(-time.Second)
	w.node("n3").Link = probeplan.LinkVerdict{Change: probeplan.LinkSlower, Mbps: 9, Since: later, At: w.now}
	again, _ := catchUp()
	if n, _ := involving(again, "n3"); n != 3 {
		t.Fatalf("a later change: got %v, want n3's three pairs", again)
	}
}
