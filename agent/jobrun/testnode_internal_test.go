package jobrun

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// testNode is a Node over f for tests of its bookkeeping: nothing it does there reaches the
// network, so every dependency on other agents refuses.
func testNode(t *testing.T, f StateReader, prune func()) *Node {
	t.Helper()
	errNone := errors.New("no peers in this test")
	n, err := New(Config{Name: "n0", DataDir: t.TempDir(), LocalAddr: "https://127.0.0.1:1"}, Deps{
		Log: slog.New(slog.DiscardHandler), Now: time.Now, State: f, Applied: make(chan struct{}),
		Propose:           func(context.Context, []byte) (api.ApplyResult, error) { return api.ApplyResult{}, errNone },
		HTTPAddrOf:        func(string) (string, error) { return "", errNone },
		PeerClient:        func(base string) *api.Client { return &api.Client{Base: base} },
		StreamClient:      &http.Client{},
		NodeStatus:        func(string) (string, bool) { return "", false },
		JobCapability:     func(*raftfsm.Job, *raftfsm.Attempt) string { return "cap" },
		MayRunAs:          func(string) error { return errNone },
		ResizeSignalEvery: func() time.Duration { return time.Second },
		Prune:             prune,
		Settle:            func(context.Context, Key) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// applier applies commands to f as raft would, one index each, and fails
// the test on a refusal.
func applier(t *testing.T, f *raftfsm.FSM) func(typ string, body any) raftfsm.Result {
	var index uint64
	return func(typ string, body any) raftfsm.Result {
		t.Helper()
		b, err := raftfsm.Encode(typ, time.Unix(1700000000, 0), body)
		if err != nil {
			t.Fatal(err)
		}
		index++
		res := f.Apply(&raft.Log{Index: index, Data: b}).(raftfsm.Result)
		if res.Err != nil {
			t.Fatalf("%s: %v", typ, res.Err)
		}
		return res
	}
}
