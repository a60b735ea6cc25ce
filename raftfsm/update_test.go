package raftfsm

import (
	"testing"
	"time"
)

// TestUpdateJob: an owner shortens a queued job's time limit, never
// lengthens or lifts it; root may; nobody changes a job that started.
func TestUpdateJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "u", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 4, Timeout: time.Hour}}).JobID
	h.refused(CmdUpdateJob, UpdateJob{ID: id, User: "bob", Timeout: time.Minute}, ErrNotOwner)
	h.refused(CmdUpdateJob, UpdateJob{ID: id, User: "alice", Timeout: 2 * time.Hour}, ErrNotOwner)
	h.refused(CmdUpdateJob, UpdateJob{ID: id, User: "alice", Timeout: 0}, ErrNotOwner)
	h.refused(CmdUpdateJob, UpdateJob{ID: id, User: "alice", Timeout: -time.Second}, ErrInvalid)
	if r := h.ok(CmdUpdateJob, UpdateJob{ID: id, User: "alice", Timeout: 30 * time.Minute}); r.Noop || h.job(id).Spec.Timeout != 30*time.Minute {
		t.Fatalf("owner shortening: %+v, limit %s", r, h.job(id).Spec.Timeout)
	}
	if r := h.ok(CmdUpdateJob, UpdateJob{ID: id, User: "alice", Timeout: 30 * time.Minute}); !r.Noop {
		t.Fatalf("the same limit again is not a no-op: %+v", r)
	}
	if r := h.ok(CmdUpdateJob, UpdateJob{ID: id, User: "root", Timeout: 0}); r.Noop || h.job(id).Spec.Timeout != 0 {
		t.Fatalf("root lifting the limit: %+v, limit %s", r, h.job(id).Spec.Timeout)
	}
	h.launch(id, 1, "a", "b")
	h.refused(CmdUpdateJob, UpdateJob{ID: id, User: "root", Timeout: time.Minute}, ErrWrongState)
}
