package raftfsm

import (
	"bytes"
	"io"
	"testing"
	"time"
)

func TestDrain_Lifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.ok(CmdDrainNode, DrainNode{Node: "b"})
	if res.Noop {
		t.Fatal("first drain is a no-op")
	}
	since := h.f.State().Drains["b"].Since
	if since.IsZero() || !h.f.State().Drains["b"].Deadline.IsZero() {
		t.Fatalf("drain = %+v, want a since and no deadline", h.f.State().Drains["b"])
	}
	if again := h.ok(CmdDrainNode, DrainNode{Node: "b"}); !again.Noop {
		t.Error("draining a drained node again without a deadline changed the state")
	}
	h.ok(CmdDrainNode, DrainNode{Node: "b", Deadline: time.Minute})
	d := h.f.State().Drains["b"]
	if !d.Since.Equal(since) || d.Deadline.Sub(since) <= time.Minute {
		t.Errorf("new deadline: drain = %+v, want since kept and a deadline a minute after the command", d)
	}
	if d.Expired(d.Deadline.Add(-time.Nanosecond)) || !d.Expired(d.Deadline) {
		t.Error("Expired is wrong around the deadline")
	}
	if got := DrainState(h.f.State(), "b"); got != "drained" {
		t.Errorf("drain state of an idle drained node = %q, want drained", got)
	}
	if got := DrainState(h.f.State(), "a"); got != "" {
		t.Errorf("drain state of a node in service = %q, want \"\"", got)
	}

	// The drain survives a snapshot and a restore (a new leader reads the same).
	snap := snapshotBytes(t, h.f)
	g := New()
	if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if got := g.State().Drains["b"]; !got.Deadline.Equal(d.Deadline) || got.Node != "b" {
		t.Errorf("restored drain = %+v, want %+v", got, d)
	}

	h.refused(CmdDrainNode, DrainNode{Node: ""}, ErrInvalid)
	h.refused(CmdDrainNode, DrainNode{Node: "c", Deadline: -time.Second}, ErrInvalid)
	h.refused(CmdDrainNode, DrainNode{Node: "c", Deadline: MaxDrainDeadline + 1}, ErrInvalid)
	h.refused(CmdUndrainNode, UndrainNode{}, ErrInvalid)

	if res := h.ok(CmdUndrainNode, UndrainNode{Node: "b"}); res.Noop {
		t.Error("undrain of a drained node is a no-op")
	}
	if _, ok := h.f.State().Drained("b"); ok {
		t.Error("b is still drained after undrain")
	}
	if res := h.ok(CmdUndrainNode, UndrainNode{Node: "b"}); !res.Noop {
		t.Error("undrain of a node in service changed the state")
	}
}

func TestDrain_DrainingWhileAttemptsHoldTheNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "r", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 2}})
	h.ok(CmdPlaceJob, PlaceJob{ID: 1, Attempt: 1, Hosts: []Host{{Node: "a", NP: 1}, {Node: "b", NP: 1}}})
	h.ok(CmdDrainNode, DrainNode{Node: "b"})
	if got := DrainState(h.f.State(), "b"); got != "draining" {
		t.Errorf("drain state with a launching attempt = %q, want draining", got)
	}
	zero := 0
	h.ok(CmdAckReservation, AckReservation{ID: 1, Attempt: 1, Node: "a"})
	h.ok(CmdAckReservation, AckReservation{ID: 1, Attempt: 1, Node: "b"})
	h.ok(CmdStartJob, StartJob{ID: 1, Attempt: 1})
	if got := DrainState(h.f.State(), "b"); got != "draining" {
		t.Errorf("drain state with a running attempt = %q, want draining", got)
	}
	h.ok(CmdFinishAttempt, FinishAttempt{ID: 1, Attempt: 1, ExitCode: &zero})
	if got := DrainState(h.f.State(), "b"); got != "drained" {
		t.Errorf("drain state once the job finished = %q, want drained", got)
	}
}
