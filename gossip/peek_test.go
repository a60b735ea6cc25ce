package gossip

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

// TestPeekVersionAllocatesNothing checks the point of peeking: a copy
// of a state already held costs no allocation to recognise.
func TestPeekVersionAllocatesNothing(t *testing.T) {
	s := sampleState()
	b, _ := nodestate.EncodeState(&s)
	tb := NewTable("self")
	tb.Merge(s, true)
	if n := testing.AllocsPerRun(100, func() {
		v, ok := nodestate.PeekVersion(b)
		if !ok || !tb.stale(v) {
			t.Fatal("a copy of the state held is not recognised as stale")
		}
	}); n != 0 {
		t.Errorf("peeking at a stale copy allocates %.0f times, want 0", n)
	}
}

// TestNotifyMsgDropsStaleCopies checks that a copy of a state the table
// holds is dropped unread, a newer version merged and re-gossiped, and
// that the shortcut never drops what the decoder would take.
func TestNotifyMsgDropsStaleCopies(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	g := &Gossip{table: NewTable("self"), changed: make(chan struct{}, 1), log: slog.New(slog.NewTextHandler(&logged, nil))}
	g.q = newTestQueue()
	d := (*delegate)(g)
	s := sampleState()
	b, _ := nodestate.EncodeState(&s)
	d.NotifyMsg(b)
	if e, ok := g.table.Get(s.Name); !ok || e.State.Seq != s.Seq {
		t.Fatalf("first copy not merged: %+v", e)
	}
	if g.q.NumQueued() != 1 {
		t.Fatalf("first copy queued %d times for re-gossip, want 1", g.q.NumQueued())
	}
	// The same version again, with a body the decoder would refuse: it is
	// a copy of a state held, so it is dropped without being decoded.
	bad := append([]byte(nil), b...)
	bad = append(bad[:len(bad)-1], []byte(`,"static":"not an object"}`)...)
	if _, err := nodestate.DecodeState(bad); err == nil {
		t.Fatal("the test's stale copy decodes; it must not, to show it is not decoded")
	}
	d.NotifyMsg(bad)
	if logged.Len() > 0 {
		t.Fatalf("a stale copy was decoded: %s", logged.String())
	}
	// Newer versions are merged, whatever their size.
	for seq := s.Seq + 1; seq < s.Seq+4; seq++ {
		n := s.Clone()
		n.Seq = seq
		nb, _ := nodestate.EncodeState(&n)
		d.NotifyMsg(nb)
		if e, _ := g.table.Get(s.Name); e.State.Seq != seq {
			t.Fatalf("seq %d not merged: table holds %d", seq, e.State.Seq)
		}
	}
	// A new boot with a lower seq is newer too.
	reboot := s.Clone()
	reboot.Boot, reboot.Seq = s.Boot+1, 1
	rb, _ := nodestate.EncodeState(&reboot)
	d.NotifyMsg(rb)
	if e, _ := g.table.Get(s.Name); e.State.Boot != reboot.Boot {
		t.Fatalf("a new boot was not merged: %+v", e.State)
	}
	// A copy of this node's own state from a peer is never taken.
	own := s.Clone()
	own.Name = "self"
	ob, _ := nodestate.EncodeState(&own)
	d.NotifyMsg(ob)
	if _, ok := g.table.Get("self"); ok {
		t.Fatal("a remote copy of the node's own state was merged")
	}
	if got := fmt.Sprint(g.q.NumQueued()); got != "1" {
		t.Fatalf("%s states queued, want 1 (the newest of %s replaces the older)", got, s.Name)
	}
}

func newTestQueue() *memberlist.TransmitLimitedQueue {
	return &memberlist.TransmitLimitedQueue{NumNodes: func() int { return 10 }, RetransmitMult: 4}
}
