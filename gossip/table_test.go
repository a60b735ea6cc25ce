package gossip

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

func TestTableKeepsNewest(t *testing.T) {
	t.Parallel()
	tb := NewTable("self")
	s := nodestate.NodeState{Name: "a", Boot: 10, Seq: 5}
	if !tb.Merge(s, true) {
		t.Fatal("first state not taken")
	}
	older := nodestate.NodeState{Name: "a", Boot: 10, Seq: 4}
	if tb.Merge(older, true) {
		t.Fatal("older seq replaced newer")
	}
	same := nodestate.NodeState{Name: "a", Boot: 10, Seq: 5}
	if tb.Merge(same, true) {
		t.Fatal("equal version reported as new")
	}
	// A restart resets Seq but has a later Boot, and must win.
	restarted := nodestate.NodeState{Name: "a", Boot: 11, Seq: 1}
	if !tb.Merge(restarted, true) {
		t.Fatal("restarted node's state lost to its old life")
	}
	stale := nodestate.NodeState{Name: "a", Boot: 10, Seq: 99}
	if tb.Merge(stale, true) {
		t.Fatal("old life's state beat the restarted one")
	}
	if e, _ := tb.Get("a"); e.State.Boot != 11 {
		t.Fatalf("boot = %d, want 11", e.State.Boot)
	}
}

func TestTableIgnoresRemoteCopyOfSelf(t *testing.T) {
	t.Parallel()
	tb := NewTable("self")
	tb.Merge(nodestate.NodeState{Name: "self", Boot: 1, Seq: 1}, false)
	if tb.Merge(nodestate.NodeState{Name: "self", Boot: 9, Seq: 9}, true) {
		t.Fatal("a peer overwrote our own state")
	}
}

func TestTableReap(t *testing.T) {
	t.Parallel()
	tb := NewTable("self")
	t0 := time.Unix(1000, 0)
	for _, n := range []string{"a", "b", "c"} {
		tb.Merge(nodestate.NodeState{Name: n, Boot: 1}, true)
		tb.SetStatus(n, nodestate.StatusAlive, t0)
	}
	tb.SetStatus("a", nodestate.StatusDead, t0)
	tb.SetStatus("b", nodestate.StatusLeft, t0.Add(time.Minute))
	if got := tb.Reap(t0.Add(30*time.Second), time.Minute); len(got) != 0 {
		t.Fatalf("reaped %v before the deadline", got)
	}
	if e, _ := tb.Get("a"); e.Status != nodestate.StatusDead {
		t.Fatalf("dead node shown %q before reaping", e.Status)
	}
	if got := tb.Reap(t0.Add(90*time.Second), time.Minute); len(got) != 1 || got[0] != "a" {
		t.Fatalf("reaped %v, want [a]", got)
	}
	// Only c is alive; b has left and must not be handed to joiners.
	if live := tb.Live(); len(live) != 1 || live[0].Name != "c" {
		t.Fatalf("live = %+v, want only c", live)
	}
}

func TestTableLeaveIntentEitherOrder(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	// Intent first, then memberlist's death notice.
	a := NewTable("self")
	a.Merge(nodestate.NodeState{Name: "x", Boot: 1, Seq: 1}, true)
	a.Merge(nodestate.NodeState{Name: "x", Boot: 1, Seq: 2, Leaving: true}, true)
	a.SetStatus("x", nodestate.StatusDead, t0)
	// Death notice first, then the intent.
	b := NewTable("self")
	b.Merge(nodestate.NodeState{Name: "x", Boot: 1, Seq: 1}, true)
	b.SetStatus("x", nodestate.StatusDead, t0)
	b.Merge(nodestate.NodeState{Name: "x", Boot: 1, Seq: 2, Leaving: true}, true)
	for name, tb := range map[string]*Table{"intent first": a, "death first": b} {
		if e, _ := tb.Get("x"); e.Status != nodestate.StatusLeft {
			t.Errorf("%s: status %q, want left", name, e.Status)
		}
	}
	// A restart clears the intent: the new life is alive, and if it then
	// dies it is dead.
	a.Merge(nodestate.NodeState{Name: "x", Boot: 2, Seq: 1}, true)
	a.SetStatus("x", nodestate.StatusAlive, t0)
	a.SetStatus("x", nodestate.StatusDead, t0)
	if e, _ := a.Get("x"); e.Status != nodestate.StatusDead {
		t.Errorf("restarted node that died: %q, want dead", e.Status)
	}
}

// A members snapshot read before a death notice does not bring the dead
// node back (Nodes reads memberlist outside the table's lock); a join
// notice does, and the snapshot still marks unknown and suspect nodes.
func TestTableSnapshotDoesNotReviveTheDead(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	tb := NewTable("self")
	for _, n := range []string{"dead", "left", "new", "sus"} {
		tb.Merge(nodestate.NodeState{Name: n, Boot: 1, Seq: 1}, true)
	}
	tb.SetStatus("dead", nodestate.StatusDead, t0)
	tb.SetStatus("left", nodestate.StatusLeft, t0)
	tb.SetStatus("sus", nodestate.StatusSuspect, t0)
	for _, n := range []string{"dead", "left", "new", "sus", "unseen"} {
		tb.SeenLive(n, nodestate.StatusAlive, t0.Add(time.Second))
	}
	want := map[string]nodestate.Status{"dead": nodestate.StatusDead, "left": nodestate.StatusLeft, "new": nodestate.StatusAlive, "sus": nodestate.StatusAlive, "unseen": nodestate.StatusAlive}
	for n, st := range want {
		if e, _ := tb.Get(n); e.Status != st {
			t.Errorf("%s after a stale snapshot: %q, want %q", n, e.Status, st)
		}
	}
	tb.SetStatus("dead", nodestate.StatusAlive, t0.Add(2*time.Second)) // memberlist's join notice
	if e, _ := tb.Get("dead"); e.Status != nodestate.StatusAlive {
		t.Errorf("a node that rejoined: %q, want alive", e.Status)
	}
}

func TestPickFailedOnlyDead(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	es := []nodestate.Entry{
		{State: nodestate.NodeState{Name: "self", Addr: "10.0.0.1", GossipPort: 7946}, Status: nodestate.StatusDead},
		{State: nodestate.NodeState{Name: "a", Addr: "10.0.0.2", GossipPort: 7946}, Status: nodestate.StatusAlive},
		{State: nodestate.NodeState{Name: "b", Addr: "10.0.0.3", GossipPort: 7946}, Status: nodestate.StatusLeft},
		{State: nodestate.NodeState{Name: "c", Addr: "10.0.0.4", GossipPort: 7946}, Status: nodestate.StatusDead},
	}
	for range 10 {
		if got := pickFailed(es, "self", rng); got != "10.0.0.4:7946" {
			t.Fatalf("picked %q, want only the dead peer c", got)
		}
	}
	if got := pickFailed(es[:3], "self", rng); got != "" {
		t.Fatalf("picked %q with no dead peer", got)
	}
}

// The table hands the dead over in map order: the same seed must pick
// the same peer whatever order the entries come in.
func TestPickFailedSeededWhateverTheOrder(t *testing.T) {
	t.Parallel()
	var es []nodestate.Entry
	for i := range 8 {
		es = append(es, nodestate.Entry{State: nodestate.NodeState{Name: fmt.Sprint("n", i), Addr: fmt.Sprint("10.0.0.", i+2), GossipPort: 7946}, Status: nodestate.StatusDead})
	}
	rev := append([]nodestate.Entry(nil), es...)
	slices.Reverse(rev)
	for seed := range uint64(20) {
		a := pickFailed(es, "self", rand.New(rand.NewPCG(seed, 1)))
		b := pickFailed(rev, "self", rand.New(rand.NewPCG(seed, 1)))
		if a != b {
			t.Fatalf("seed %d: %q in one order, %q in the other", seed, a, b)
		}
	}
}

// TestLiveShared checks the push/pull snapshot: the same states, in the
// same order, as Live, filtered the same way, and without copying any
// state's slices (a copy per state allocates per node, which is what it is
// for: at 1,000 nodes that was 4.5 % of a harness run's allocations).
func TestLiveShared(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	t0 := time.Unix(0, 0)
	tb := NewTable("self")
	self := sampleState()
	self.Name = "self"
	tb.Merge(self, false)
	for i, st := range []nodestate.Status{nodestate.StatusAlive, nodestate.StatusSuspect, nodestate.StatusDead, nodestate.StatusLeft, nodestate.StatusAlive} {
		s := sampleState()
		s.Name = fmt.Sprintf("n%d", 5-i) // inserted out of order
		s.Probes = []nodestate.ProbeBeat{{Kind: "lat", Beat: int64(i)}}
		tb.Merge(s, true)
		tb.SetStatus(s.Name, st, t0)
	}
	tb.SetStatus("nostate", nodestate.StatusAlive, t0)
	want := tb.Live()
	got := tb.liveShared()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("liveShared = %+v\nLive = %+v", got, want)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if fmt.Sprint(names) != "[n1 n4 n5 self]" {
		t.Fatalf("liveShared holds %v, want [n1 n4 n5 self] (alive or suspect, with a state, and self; sorted)", names)
	}
	// 100 states with slices: a copy per state would allocate hundreds of
	// times; the margin absorbs other tests' goroutines still winding down.
	for i := range 100 {
		s := sampleState()
		s.Name = fmt.Sprintf("m%03d", i)
		tb.Merge(s, true)
		tb.SetStatus(s.Name, nodestate.StatusAlive, t0)
	}
	if n := testing.AllocsPerRun(50, func() { _ = tb.liveShared() }); n > 20 {
		t.Errorf("liveShared allocates %.0f times for 104 states; want a few, none per state", n)
	}
}

// TestTableFailed checks what the reconnect loop reads: the dead nodes
// only (not the departed, alive or suspect ones), self included as the
// table holds it (pickFailed skips self).
func TestTableFailed(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	tb := NewTable("self")
	for name, st := range map[string]nodestate.Status{"a": nodestate.StatusAlive, "b": nodestate.StatusSuspect, "c": nodestate.StatusDead, "d": nodestate.StatusLeft, "e": nodestate.StatusDead} {
		tb.Merge(nodestate.NodeState{Name: name, Boot: 1, Seq: 1, Addr: "10.0.0.9", GossipPort: 7946}, true)
		tb.SetStatus(name, st, t0)
	}
	var names []string
	for _, e := range tb.failed() {
		names = append(names, e.State.Name)
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[c e]" {
		t.Fatalf("failed = %v, want [c e]", names)
	}
}
