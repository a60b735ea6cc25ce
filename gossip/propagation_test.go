package gossip

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// A broadcast that brings a newer state of another node is timed from its
// owner's publication; copies of a state already held and states of
// agents that do not say when they published are not.
func TestOnPropagationTimesFreshBroadcasts(t *testing.T) {
	t.Parallel()
	got := make(chan time.Duration, 8)
	cfg := TestConfig()
	cfg.Name, cfg.Key = "recv", testKey
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.OnPropagation = func(d time.Duration) { got <- d }
	g, err := New(cfg, nodestate.NodeState{Static: nodestate.Static{Cores: 4, Threads: 8}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown()
	if g.Self().Published == 0 {
		t.Fatal("this node's own state does not say when it was published")
	}
	deliver := func(seq uint64, published int64) {
		s := g.Self()
		s.Name, s.Boot, s.Seq, s.Published = "owner", 42, seq, published
		b, err := nodestate.EncodeState(&s)
		if err != nil {
			t.Fatal(err)
		}
		(*delegate)(g).NotifyMsg(b)
	}
	deliver(1, time.Now().Add(-3*time.Second).UnixMilli())
	select {
	case d := <-got:
		if d < 3*time.Second || d > 60*time.Second {
			t.Fatalf("a state published 3 s ago timed at %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a fresh broadcast was not timed")
	}
	deliver(1, time.Now().UnixMilli()) // a copy of the state held
	deliver(2, 0)                      // an older agent's state: no publication time
	if e, ok := g.Lookup("owner"); !ok || e.State.Seq != 2 {
		t.Fatalf("owner's state not merged: %+v", e.State)
	}
	select {
	case d := <-got:
		t.Fatalf("timed %v for a stale copy or a state without a publication time", d)
	default:
	}
}
