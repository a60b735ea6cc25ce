package raftfsm

import "testing"

// TestRequeueJob: a running job's attempt ends killed and the job is
// queued again for a new attempt; a finished one is queued again with
// its attempts kept; only its owner or root may; requeuehold also holds.
func TestRequeueJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("r", 4)
	h.launch(id, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
	h.refused(CmdRequeueJob, RequeueJob{ID: id, User: "bob"}, ErrNotOwner)
	h.ok(CmdRequeueJob, RequeueJob{ID: id, User: "alice"})
	j := h.wantState(id, StateQueued)
	if a := j.Attempts[0]; a.State != StateKilled || a.Reason != "requeued by alice" {
		t.Fatalf("the running attempt after a requeue: %s %q, want killed, requeued by alice", a.State, a.Reason)
	}
	h.launch(id, 2, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 2})
	zero := 0
	h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 2, ExitCode: &zero})
	h.wantState(id, StateDone)
	h.ok(CmdRequeueJob, RequeueJob{ID: id, User: "root", Hold: true})
	j = h.wantState(id, StateQueued)
	if !j.Held || j.ExitCode != nil || !j.EndedAt.IsZero() || len(j.Attempts) != 2 {
		t.Fatalf("a finished job requeued held: held %v, exit %v, ended %v, %d attempts; want held, no exit, no end, both attempts kept", j.Held, j.ExitCode, j.EndedAt, len(j.Attempts))
	}
	if r := h.ok(CmdRequeueJob, RequeueJob{ID: id, User: "alice", Hold: true}); !r.Noop {
		t.Fatalf("requeuing a held queued job again: %+v, want a no-op", r)
	}
}
