package raftfsm

import (
	"testing"
	"time"
)

// TestElastic_ResizeByCheckpoint walks an elastic job through a resize: progress, resize_job,
// exit 75 (checkpointed, requeued, not a failure), relaunch on the new count, the restart cost
// measured from the next attempt's first report, and a final exit 0.
func TestElastic_ResizeByCheckpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "e", Owner: "alice", Spec: JobSpec{Cmd: []string{"./jacobi"}, NP: 2, PPN: 1, MaxAttempts: 1,
		Elastic: &ElasticSpec{MinNP: 1, MaxNP: 4, Deadline: secs(600), Iterations: 1000}}}).JobID
	if e := h.job(id).Elastic; e == nil || e.TargetNP != 2 {
		t.Fatalf("elastic record at submit: %+v", e)
	}
	h.run2(id, 1, "a", "b")
	h.refused(CmdResizeJob, ResizeJob{ID: id, Attempt: 1, TargetNP: 2, Reason: "same"}, ErrInvalid)
	h.refused(CmdResizeJob, ResizeJob{ID: id, Attempt: 1, TargetNP: 5, Reason: "too big"}, ErrInvalid)
	h.refused(CmdReportProgress, ReportProgress{ID: id, Attempt: 1, Iter: -1}, ErrInvalid)
	h.ok(CmdReportProgress, ReportProgress{ID: id, Attempt: 1, Iter: 10})
	h.ok(CmdReportProgress, ReportProgress{ID: id, Attempt: 1, Iter: 50})
	if r := h.ok(CmdReportProgress, ReportProgress{ID: id, Attempt: 1, Iter: 40}); !r.Noop {
		t.Fatal("a report that does not advance should be a no-op")
	}
	h.ok(CmdResizeJob, ResizeJob{ID: id, Attempt: 1, TargetNP: 4, Reason: "deadline: needs 4"})
	if r := h.ok(CmdResizeJob, ResizeJob{ID: id, Attempt: 1, TargetNP: 4, Reason: "deadline: needs 4"}); !r.Noop {
		t.Fatal("re-proposed resize should be a no-op")
	}
	h.refused(CmdResizeJob, ResizeJob{ID: id, Attempt: 1, TargetNP: 3, Reason: "changed my mind"}, ErrWrongState)
	code := ExitCheckpointed
	h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &code})
	j := h.wantState(id, StateQueued)
	if a := j.Attempts[0]; a.State != StateCheckpointed || j.Elastic.Checkpoints != 1 || j.failures() != 0 {
		t.Fatalf("after exit 75: attempt %+v, elastic %+v", a, j.Elastic)
	}
	// MaxAttempts is 1, yet the relaunch is allowed: a checkpoint is not a failure.
	h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: 2, Hosts: []Host{{Node: "a", NP: 1}, {Node: "b", NP: 1}, {Node: "c", NP: 1}, {Node: "d", NP: 1}}})
	for _, n := range []string{"a", "b", "c", "d"} {
		h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: 2, Node: n})
	}
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 2})
	h.ok(CmdReportProgress, ReportProgress{ID: id, Attempt: 2, Iter: 51})
	j = h.job(id)
	if len(j.Elastic.RestartCosts) != 1 || j.Elastic.RestartCosts[0] <= 0 || j.Current().Progress.FirstIter != 51 {
		t.Fatalf("restart cost not measured: %+v %+v", j.Elastic, j.Current().Progress)
	}
	zero := 0
	h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 2, ExitCode: &zero})
	j = h.wantState(id, StateDone)
	if len(j.Elastic.History) != 1 || j.Elastic.History[0].FromNP != 2 || j.Elastic.History[0].ToNP != 4 {
		t.Fatalf("history %+v", j.Elastic.History)
	}
}

// TestElastic_Exit75 checks the cases where exit 75 is not a checkpoint: a fixed-size job fails
// with it, and an elastic job that never reported progress nor was asked is retried as a failure.
func TestElastic_Exit75(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	code := ExitCheckpointed
	fixed := h.submit("f", 2)
	h.run2(fixed, 1, "a", "b")
	h.ok(CmdFinishAttempt, FinishAttempt{ID: fixed, Attempt: 1, ExitCode: &code})
	h.wantState(fixed, StateFailed)

	id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "e", Owner: "alice", Spec: JobSpec{Cmd: []string{"./x"}, NP: 2, MaxAttempts: 2,
		Elastic: &ElasticSpec{MinNP: 1, MaxNP: 4, Iterations: 10}}}).JobID
	h.run2(id, 1, "a", "b")
	h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &code})
	if j := h.wantState(id, StateQueued); j.Attempts[0].State != StateFailed || j.failures() != 1 {
		t.Fatalf("silent exit 75: %+v", j.Attempts[0])
	}
}

// TestElastic_ShrinkOnLostNodeIsRecorded: a placement on fewer processes than the target (a node
// was lost) goes into the history with its reason.
func TestElastic_ShrinkOnLostNodeIsRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "e", Owner: "alice", Spec: JobSpec{Cmd: []string{"./x"}, NP: 2,
		Elastic: &ElasticSpec{MinNP: 1, MaxNP: 4, Deadline: time.Hour, Iterations: 10}}}).JobID
	h.run2(id, 1, "a", "b")
	h.ok(CmdRemoveNode, RemoveNode{Node: "b"})
	h.refused(CmdReportProgress, ReportProgress{ID: id, Attempt: 1, Iter: 3}, ErrStaleAttempt)
	h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: 2, Hosts: []Host{{Node: "a", NP: 1}}, Reason: "lost node b: resumed on 1 of 2"})
	j := h.job(id)
	if len(j.Elastic.History) != 1 || j.Elastic.History[0].Reason != "lost node b: resumed on 1 of 2" || j.Elastic.TargetNP != 2 {
		t.Fatalf("history %+v target %d", j.Elastic.History, j.Elastic.TargetNP)
	}
}

// run2 places attempt n of job id on one process each of nodes a and b, acks and starts it.
func (h *harness) run2(id uint64, n int, a, b string) {
	h.t.Helper()
	h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: n, Hosts: []Host{{Node: a, NP: 1}, {Node: b, NP: 1}}})
	h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: n, Node: a})
	h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: n, Node: b})
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: n})
}
