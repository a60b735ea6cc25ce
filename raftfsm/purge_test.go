package raftfsm

import (
	"bytes"
	"io"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestPurgeJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	done := h.submit("r-done", 4)
	h.launch(done, 1, "n1", "n2")
	h.ok(CmdStartJob, StartJob{ID: done, Attempt: 1})
	zero := 0
	h.ok(CmdFinishAttempt, FinishAttempt{ID: done, Attempt: 1, ExitCode: &zero})
	killed := h.submit("r-killed", 4)
	h.ok(CmdKillJob, KillJob{ID: killed, User: "alice"})
	running := h.submit("r-running", 4)
	h.launch(running, 1, "n1", "n2")
	h.ok(CmdStartJob, StartJob{ID: running, Attempt: 1})
	queued := h.submit("r-queued", 4)

	// Only finished jobs ended long enough ago are candidates, oldest first.
	ended := h.job(killed).EndedAt
	if got := PurgeCandidates(h.f.State(), ended, time.Second); !slices.Equal(got, []uint64{done}) {
		t.Fatalf("candidates at the kill = %v, want [%d]", got, done)
	}
	if got := PurgeCandidates(h.f.State(), ended.Add(time.Hour), time.Minute); !slices.Equal(got, []uint64{done, killed}) {
		t.Fatalf("candidates an hour later = %v, want [%d %d]", got, done, killed)
	}

	res := h.ok(CmdPurgeJobs, PurgeJobs{IDs: []uint64{killed, running, queued, 999, done}})
	if !slices.Equal(res.JobIDs, []uint64{done, killed}) || res.Noop {
		t.Fatalf("purged %v (noop %v), want [%d %d]", res.JobIDs, res.Noop, done, killed)
	}
	s := h.f.State()
	for _, id := range []uint64{done, killed} {
		if _, ok := s.Jobs[id]; ok {
			t.Errorf("job %d still in the state", id)
		}
	}
	h.wantState(running, StateRunning)
	h.wantState(queued, StateQueued)
	if j := s.JobByRequest("r-done"); j != nil {
		t.Errorf("request r-done still deduplicates to job %d", j.ID)
	}
	// A re-proposal changes nothing; IDs are never reused.
	if res := h.ok(CmdPurgeJobs, PurgeJobs{IDs: []uint64{done}}); !res.Noop {
		t.Errorf("re-proposal: %+v, want noop", res)
	}
	again := h.submit("r-done", 1)
	if again <= queued {
		t.Errorf("resubmission got ID %d, want a new one above %d", again, queued)
	}
	h.refused(CmdPurgeJobs, PurgeJobs{}, ErrInvalid)
	h.refused(CmdPurgeJobs, PurgeJobs{IDs: make([]uint64, MaxPurgeBatch+1)}, ErrInvalid)
	// The state after a purge survives a snapshot and restore.
	f := New()
	if err := f.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, h.f)))); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.State(), h.f.State()) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", f.State(), h.f.State())
	}
}

// A retried array submit must not create the array again once job GC has
// purged its first task: the later tasks still carry the request.
func TestPurgedArrayHeadStillDedupsTheSubmit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sub := SubmitJob{RequestID: "r-arr", Owner: "alice", Spec: JobSpec{Cmd: []string{"./task"}, NP: 1,
		Array: &ArraySpec{Tasks: []int{0, 1, 2}}}}
	first := h.ok(CmdSubmitJob, sub).JobID
	h.ok(CmdKillJob, KillJob{ID: first, User: "alice"})
	h.ok(CmdPurgeJobs, PurgeJobs{IDs: []uint64{first}})
	res := h.do(CmdSubmitJob, sub)
	if res.Err != nil || !res.Noop || res.JobID != first {
		t.Fatalf("retried submit = job %d (noop %v, err %v), want a no-op naming array %d", res.JobID, res.Noop, res.Err, first)
	}
	if n := len(h.f.State().Jobs); n != 2 {
		t.Fatalf("%d jobs after the retry, want the 2 tasks left", n)
	}
}
