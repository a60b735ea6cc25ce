package gossip

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// deepCopy is what a read returned, copied so that a later change of the
// table's rows (or of what they share) shows against it.
func deepCopy(es []nodestate.Entry) []nodestate.Entry {
	out := make([]nodestate.Entry, len(es))
	for i, e := range es {
		out[i] = e
		out[i].State = e.State.Clone()
		out[i].Traffic = slices.Clone(e.Traffic)
	}
	return out
}

func names(es []nodestate.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.State.Name
	}
	return out
}

// TestEntriesSortedByName inserts states and bare members in random order,
// reaps some, and checks that every read lists the table's rows by name:
// the order is kept on insert and removal, not sorted on read.
func TestEntriesSortedByName(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(1000, 0)
	tb := NewTable("self")
	for step := range 400 {
		name := fmt.Sprintf("n%03d", rng.IntN(150))
		switch rng.IntN(4) {
		case 0:
			tb.SetStatus(name, nodestate.StatusAlive, t0)
		case 1:
			tb.SetStatus(name, nodestate.StatusDead, t0.Add(time.Duration(step)*time.Second))
		default:
			s := benchState(0)
			s.Name, s.Seq = name, uint64(step)
			tb.Merge(s, true)
		}
		if step%50 == 49 {
			tb.Reap(t0.Add(time.Duration(step)*time.Second), 100*time.Second)
		}
		got := names(tb.Entries())
		var want []string
		for n := range tb.rows {
			want = append(want, n)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: Entries lists %v, want the rows by name %v", step, got, want)
		}
		if f := names(tb.failed()); !slices.IsSorted(f) {
			t.Fatalf("step %d: failed lists %v, not by name", step, f)
		}
	}
	if len(tb.rows) < 20 {
		t.Fatalf("only %d rows at the end: the test covers too little", len(tb.rows))
	}
}

// TestEntriesAreTheCallers changes everything a reader may change in what
// Entries, Get and liveShared returned (Gossip.Nodes' doc says what) and
// checks that the table's rows did not move, and that the table's next
// read leaves the reader's slice, an entry it appended included, as the
// reader left it (a table that handed out one reused buffer would write
// its rows back over the reader's).
func TestEntriesAreTheCallers(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	tb := NewTable("self")
	fillTable(tb, 20, t0)
	want := deepCopy(tb.Entries())

	got := tb.Entries()
	slices.Reverse(got)
	for i := range got {
		e := &got[i]
		e.Status, e.HasState, e.Since = nodestate.StatusDead, false, time.Time{}
		e.State.Name, e.State.Seq = "changed", 0
		e.State.Dyn.Users, e.State.Static.Cores = 99, 99
		e.State.Raft.Proposal, e.State.Static.PEs, e.State.Coord, e.Traffic = nil, nil, nil, nil
	}
	got = append(got, nodestate.Entry{Status: nodestate.StatusAlive, HasState: true, State: nodestate.NodeState{Name: "appended"}})
	mine := deepCopy(got)
	one, _ := tb.Get(want[3].State.Name)
	one.State.Dyn.Load.Now, one.Status = 1e9, nodestate.StatusLeft
	for _, s := range tb.liveShared() {
		s.Name, s.Dyn.Users = "changed", 99
	}

	if again := tb.Entries(); !reflect.DeepEqual(again, want) {
		t.Fatalf("a reader's changes reached the table:\n%+v\nwant\n%+v", again[:2], want[:2])
	}
	if !reflect.DeepEqual(got, mine) {
		t.Fatalf("the table's next read changed the reader's slice:\n%+v\nwant\n%+v", got[len(got)-2:], mine[len(mine)-2:])
	}
}

// TestMergeCopiesOnWrite checks both sides of sharing the stored states:
// the table keeps a copy of its own of what it was given (the sender may
// go on changing its state), and a newer state replaces the stored one
// rather than being written into it, so that a read taken earlier still
// holds the older state, its slices and traffic included.
func TestMergeCopiesOnWrite(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	tb := NewTable("self")
	s := benchState(1)
	s.Static.Features = []string{"ib"}
	s.Raft.Want = []string{"n9"}
	s.Link = &nodestate.LinkState{Change: "slower", Mbps: 10}
	s.Dyn.NetRxBytesPerSec = 10e6
	tb.Merge(s, true)
	tb.SetStatus(s.Name, nodestate.StatusAlive, t0)
	held := deepCopy(tb.Entries())

	// The sender changes its state in place after Merge.
	s.Static.PEs[0].Count, s.Static.Features[0], s.Probes[0].PID = 99, "x", 99
	s.Raft.Proposal[0], s.Raft.Want[0], s.Coord.Vec[0], s.Link.Mbps = "x", "x", 99, 99
	if got := tb.Entries(); !reflect.DeepEqual(got, held) {
		t.Fatalf("the sender's changes after Merge reached the table:\n%+v\nwant\n%+v", got[0].State, held[0].State)
	}

	// A newer state, with other slices, replaces the stored one.
	read := tb.Entries()
	newer := benchState(1)
	newer.Seq = s.Seq + 1
	newer.Static.PEs[0].Count, newer.Probes[0].PID, newer.Coord.Vec[0] = 7, 7, 7
	newer.Dyn.SampledAt += 5000
	newer.Dyn.NetRxBytesPerSec = 1e9
	if !tb.Merge(newer, true) {
		t.Fatal("the newer state was not taken")
	}
	if !reflect.DeepEqual(read, held) {
		t.Fatalf("Merge wrote into a state a reader holds:\n%+v\nwant\n%+v", read[0], held[0])
	}
	if e, _ := tb.Get(s.Name); e.State.Static.PEs[0].Count != 7 || len(e.Traffic) != len(held[0].Traffic)+1 {
		t.Fatalf("the table holds %+v with traffic %v, want the newer state and one more traffic point", e.State.Static.PEs, e.Traffic)
	}
}

// TestNodeIsNodesEntry checks that Node, which reads one row rather than
// the whole table, answers what Nodes lists for every node, and nothing
// for a node the table does not hold.
func TestNodeIsNodesEntry(t *testing.T) {
	t.Parallel()
	nodes := joinedCluster(t, 3, "ne")
	defer shutdownAll(nodes)
	g := nodes[0]
	waitFor(t, 10*time.Second, "Node to answer each of Nodes' 3 entries", func() bool {
		all := g.Nodes()
		if len(all) != 3 {
			return false
		}
		for _, want := range all {
			if got, ok := g.Node(want.State.Name); !ok || !reflect.DeepEqual(got, want) {
				return false
			}
		}
		return true
	})
	if e, ok := g.Node("nobody"); ok {
		t.Fatalf("Node(nobody) = %+v, true; want false", e)
	}
}
