package raftfsm

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// An operator's restore fails the attempts its snapshot shows live and
// requeues their jobs; the next attempt of every job, and the next job,
// gets a number the live cluster never gave out, so no node ever starts
// one attempt number of a job twice.
func TestRestored(t *testing.T) {
	t.Parallel()
	taken, at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	// The snapshot: job 1 running attempt 1, job 2 done, job 3 queued
	// after a failed attempt 1, job 4 launching attempt 1.
	h := newHarness(t)
	running, done, queued, launching := h.submit("run", 4), h.submit("done", 4), h.submit("queued", 4), h.submit("launching", 4)
	h.launch(running, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: running, Attempt: 1})
	h.launch(done, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: done, Attempt: 1})
	zero := 0
	h.ok(CmdFinishAttempt, FinishAttempt{ID: done, Attempt: 1, ExitCode: &zero})
	h.launch(queued, 1, "a", "b")
	h.ok(CmdFailAttempt, FailAttempt{ID: queued, Attempt: 1, Reason: "lost", Retry: true})
	h.ok(CmdPlaceJob, PlaceJob{ID: launching, Attempt: 1, Hosts: []Host{{Node: "a", NP: 2}, {Node: "b", NP: 2}}})
	snap := h.f.State()

	// The live cluster went on: job 1 failed over to attempt 2 and runs
	// it, job 3 ran attempts 2 and 3, a fifth job was submitted.
	h.ok(CmdFailAttempt, FailAttempt{ID: running, Attempt: 1, Reason: "lost", Retry: true})
	h.launch(running, 2, "c", "d")
	h.ok(CmdStartJob, StartJob{ID: running, Attempt: 2})
	for n := 2; n <= 3; n++ {
		h.launch(queued, n, "a", "b")
		h.ok(CmdFailAttempt, FailAttempt{ID: queued, Attempt: n, Reason: "lost", Retry: true})
	}
	fifth := h.submit("fifth", 4)
	live := h.f.State()

	got := Restored(snap, live, taken, at)
	checkInvariants(t, got)

	j := got.Jobs[running]
	if j.State != StateQueued || j.Attempt != 2 || j.Attempts[0].State != StateFailed || j.Attempts[1].State != StateFailed {
		t.Fatalf("job running in the snapshot: %s at attempt %d, attempts %+v; want queued after attempt 1 failed and 2 padded", j.State, j.Attempt, j.Attempts)
	}
	if r := j.Attempts[0].Reason; !strings.Contains(r, "restored from a snapshot taken 2026-11-29T10:00:00Z") || !strings.Contains(r, "attempt 1 was running") {
		t.Errorf("attempt 1's reason %q: want the restore and the snapshot's time named", r)
	}
	if a := j.Attempts[1]; !strings.Contains(a.Reason, "not used again") || a.Head != "c" || !a.Uncounted {
		t.Errorf("attempt 2, run by the live cluster only: %+v; want its live record (head c), ended, uncounted", a)
	}
	// raft's own restore checks a snapshot's shape: the result passes.
	b, err := encodeSnapshot(7, got)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckSnapshot(b); err != nil {
		t.Fatalf("the restored state's snapshot is refused: %v", err)
	}
	if err := New().Restore(io.NopCloser(bytes.NewReader(b))); err != nil {
		t.Fatalf("the restored state's snapshot does not restore: %v", err)
	}
	if l := got.Jobs[launching]; l.State != StateQueued || l.Attempt != 1 || l.Attempts[0].State != StateFailed {
		t.Errorf("job launching in the snapshot: %s at attempt %d; want queued after attempt 1 failed", l.State, l.Attempt)
	}
	if q := got.Jobs[queued]; q.State != StateQueued || q.Attempt != 3 || len(q.Attempts) != 3 {
		t.Errorf("queued job: attempt %d of %d recorded, want 3 (live gave out 2 and 3)", q.Attempt, len(q.Attempts))
	}
	if d := got.Jobs[done]; d.State != StateDone || len(d.Attempts) != 1 {
		t.Errorf("done job changed: %s, %d attempts", d.State, len(d.Attempts))
	}
	if got.Jobs[fifth] != nil || got.NextJobID != fifth+1 {
		t.Errorf("next job ID %d (job %d present: %v), want %d: the live cluster gave out %d", got.NextJobID, fifth, got.Jobs[fifth] != nil, fifth+1, fifth)
	}
	if snap.Jobs[running].State != StateRunning || len(snap.Jobs[queued].Attempts) != 1 {
		t.Error("Restored changed the snapshot it was given")
	}

	// The requeued jobs place under new numbers, which the FSM takes.
	f := New()
	f.state = got
	hh := &harness{t: t, f: f}
	hh.ok(CmdPlaceJob, PlaceJob{ID: running, Attempt: 3, Hosts: []Host{{Node: "a", NP: 2}, {Node: "b", NP: 2}}})
	hh.ok(CmdPlaceJob, PlaceJob{ID: queued, Attempt: 4, Hosts: []Host{{Node: "a", NP: 2}, {Node: "b", NP: 2}}})

	// Into a new cluster (nothing live): only the live attempts fail.
	fresh := Restored(snap, nil, taken, at)
	if j := fresh.Jobs[running]; j.State != StateQueued || j.Attempt != 1 {
		t.Errorf("into a new cluster: job %s at attempt %d, want queued at 1", j.State, j.Attempt)
	}
}
