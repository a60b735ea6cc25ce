package raftfsm

import (
	"bytes"
	"testing"
)

// A waiter that took Changed's channel is woken by the next applied entry,
// even one the FSM refuses, and by a restore; until then it is not.
func TestChangedClosesOnApplyAndRestore(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	ch := h.f.Changed()
	if closed(ch) {
		t.Fatal("Changed is closed before anything was applied")
	}
	if h.f.Changed() != ch {
		t.Error("two waiters before an apply got different channels")
	}
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "r1", Owner: "alice", Spec: JobSpec{Cmd: []string{"true"}, NP: 1}})
	if !closed(ch) {
		t.Fatal("an applied submit did not close Changed's channel")
	}
	next := h.f.Changed()
	if closed(next) {
		t.Fatal("the channel after an apply is already closed")
	}
	if res := h.do(CmdKillJob, KillJob{ID: 99, User: "alice"}); res.Err == nil {
		t.Fatal("killing a job that does not exist was accepted")
	}
	if !closed(next) {
		t.Fatal("a refused entry, which still advances the index, did not close Changed's channel")
	}
	snap, err := h.f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	last := h.f.Changed()
	if err := h.f.Restore(nopCloser{bytes.NewReader(snap)}); err != nil {
		t.Fatal(err)
	}
	if !closed(last) {
		t.Fatal("a restore did not close Changed's channel")
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
