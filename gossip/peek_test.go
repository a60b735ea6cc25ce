package gossip

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

// TestPeekVersion checks that a broadcast's version is read from the
// bytes EncodeState writes, and that anything else is left to the full
// decoder instead of being misread.
func TestPeekVersion(t *testing.T) {
	t.Parallel()
	s := sampleState()
	s.Boot, s.Seq = -5, 1<<63+3
	b, err := nodestate.EncodeState(&s)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := nodestate.PeekVersion(b)
	if !ok || string(v.Name) != s.Name || v.Boot != s.Boot || v.Seq != s.Seq {
		t.Fatalf("peekVersion = %s boot %d seq %d, %v; want %s boot %d seq %d", v.Name, v.Boot, v.Seq, ok, s.Name, s.Boot, s.Seq)
	}
	// Another encoder's field order, an escaped name, a push/pull
	// message, a truncated one: not read, decoded whole.
	reordered, _ := json.Marshal(map[string]any{"seq": 1, "boot": 2, "name": "n1"})
	escaped := s.Clone()
	escaped.Name = `n"1`
	eb, _ := nodestate.EncodeState(&escaped)
	many, _ := nodestate.EncodeStates([]nodestate.NodeState{s})
	for name, m := range map[string][]byte{
		"reordered": append([]byte{msgState, wireV1}, reordered...),
		"escaped":   eb,
		"push/pull": many,
		"truncated": b[:len(`s1{"name":"n1","boot":-5`)],
		"version 9": append([]byte{msgState, 9}, b[2:]...),
		"no seq":    append([]byte{msgState, wireV1}, []byte(`{"name":"n1","boot":3}`)...),
		"big seq":   append([]byte{msgState, wireV1}, []byte(`{"name":"n1","boot":3,"seq":99999999999999999999}`)...),
		"empty":     nil,
	} {
		if v, ok := nodestate.PeekVersion(m); ok {
			t.Errorf("%s: peekVersion read %s boot %d seq %d from %q; want it left to the decoder", name, v.Name, v.Boot, v.Seq, m)
		}
	}
}

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

// TestDecodeFreshStates checks the push/pull shortcut: states the table
// holds are skipped unread, newer ones decoded, a fresh invalid state or
// bad JSON still rejects the whole payload, and with nothing held it
// decodes exactly what DecodeStates does.
func TestDecodeFreshStates(t *testing.T) {
	t.Parallel()
	held := sampleState()
	// Quotes and brackets inside a string must not end the element early:
	// a split that got them wrong would fall back to decoding everything,
	// which refuses this payload (below).
	held.Static.CPUModel = `Xeon "}], {["`
	newer := held.Clone()
	newer.Name, newer.Static.Hostname = "n2", "n2"
	other := held.Clone()
	other.Name, other.Seq = "n3", 1
	tb := NewTable("self")
	tb.Merge(held, true)
	old2 := newer.Clone()
	old2.Seq = newer.Seq - 1
	tb.Merge(old2, true)
	// held's copy carries a body the decoder would refuse: skipped, so
	// not decoded.
	hb, _ := nodestate.EncodeState(&held)
	heldBody := append(append([]byte(nil), hb[2:len(hb)-1]...), []byte(`,"static":"not an object"}`)...)
	nb, _ := nodestate.EncodeState(&newer)
	ob, _ := nodestate.EncodeState(&other)
	payload := append([]byte{msgStates, wireV1, '['}, heldBody...)
	payload = append(append(append(append(append(payload, ','), nb[2:]...), ' ', ',', '\n'), ob[2:]...), ']')
	if _, err := nodestate.DecodeStates(payload); err == nil {
		t.Fatal("DecodeStates takes the test's payload; the held state must be one it refuses")
	}
	got, err := nodestate.DecodeFreshStates(payload, tb.stale)
	if err != nil {
		t.Fatalf("DecodeFreshStates: %v", err)
	}
	if len(got) != 2 || got[0].Name != "n2" || got[1].Name != "n3" || got[0].Static.Hostname != "n2" {
		t.Fatalf("decoded %+v, want n2 and n3 (n1 is held)", got)
	}
	// A fresh invalid state rejects the payload, as does bad JSON.
	bad := newer.Clone()
	bad.Seq, bad.HTTPPort = newer.Seq+1, 70000
	bb, _ := nodestate.EncodeStates([]nodestate.NodeState{held, bad})
	if _, err := nodestate.DecodeFreshStates(bb, tb.stale); !errors.Is(err, nodestate.ErrMalformed) {
		t.Errorf("a fresh invalid state: err = %v, want ErrMalformed", err)
	}
	for name, b := range map[string][]byte{
		"truncated": payload[:len(payload)-1],
		"broadcast": hb,
		"object":    append([]byte{msgStates, wireV1}, nb[2:]...),
		"null":      {msgStates, wireV1, 'n', 'u', 'l', 'l'},
		"empty":     {msgStates, wireV1, '[', ']'},
	} {
		want, werr := nodestate.DecodeStates(b)
		got, gerr := nodestate.DecodeFreshStates(b, func(nodestate.Version) bool { return false })
		if (werr == nil) != (gerr == nil) || len(got) != len(want) {
			t.Errorf("%s: DecodeFreshStates = %d states, %v; DecodeStates = %d, %v", name, len(got), gerr, len(want), werr)
		}
	}
	// With nothing held it decodes what DecodeStates decodes.
	all, _ := nodestate.EncodeStates([]nodestate.NodeState{held, newer, other})
	want, _ := nodestate.DecodeStates(all)
	got, err = nodestate.DecodeFreshStates(all, func(nodestate.Version) bool { return false })
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("nothing held: DecodeFreshStates = %+v, %v; want %+v", got, err, want)
	}
}

// FuzzDecodeFreshStates checks that, with nothing held, the shortcut
// accepts and returns exactly what DecodeStates does.
func FuzzDecodeFreshStates(f *testing.F) {
	s := sampleState()
	b, _ := nodestate.EncodeStates([]nodestate.NodeState{s, s})
	f.Add(b)
	f.Add([]byte{msgStates, wireV1, '[', '{', '"', '\\', '"', '}', ']'})
	f.Add(append([]byte{msgStates, wireV1}, []byte(`[{"name":"a\"}","boot":1,"seq":2},{"name":"b","x":[{}]}]`)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := nodestate.DecodeStates(b)
		got, gerr := nodestate.DecodeFreshStates(b, func(nodestate.Version) bool { return false })
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("DecodeStates err %v, DecodeFreshStates err %v", werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) && (len(want) > 0 || len(got) > 0) {
			t.Fatalf("DecodeStates %+v, DecodeFreshStates %+v", want, got)
		}
	})
}
