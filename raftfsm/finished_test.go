package raftfsm

import (
	"strings"
	"testing"
)

// ownerJobs counts owner's jobs in the state, and the finished ones among them.
func ownerJobs(s *State, owner string) (all, finished int) {
	for _, j := range s.Jobs {
		if j.Owner == owner {
			all++
			if j.State.finished() {
				finished++
			}
		}
	}
	return all, finished
}

// TestFinishedJobsOfOneUserAreBounded is a user who submits arrays of 100 tasks with a spec of
// 60 KiB and kills them at once, ten times over (1,000 killed jobs, the flood that grew a
// snapshot from 0.12 MB to 60 MB), then 200 single jobs of the same spec. The user keeps at
// most Limits.FinishedJobs finished jobs, the newest; the pruned ones leave their history
// records; another user's finished jobs and a finished job a queued one depends on stay; the
// snapshot stays small.
func TestFinishedJobsOfOneUserAreBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	lim := DefaultLimits()
	h.ok(CmdSetLimits, SetLimits{Limits: lim})
	// Bob's finished jobs, one of which his queued job waits for.
	var bobs []uint64
	for i := range 3 {
		id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "bob-" + string(rune('a'+i)), Owner: "bob", Spec: JobSpec{Cmd: []string{"./b"}, NP: 1}}).JobID
		h.ok(CmdKillJob, KillJob{ID: id, User: "bob"})
		bobs = append(bobs, id)
	}
	// Alice's first job, which her queued job below waits for: it must outlive the flood.
	kept := h.ok(CmdSubmitJob, SubmitJob{RequestID: "alice-first", Owner: "alice", Spec: JobSpec{Cmd: []string{"./a"}, NP: 1}}).JobID
	h.ok(CmdKillJob, KillJob{ID: kept, User: "alice"})
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "alice-waits", Owner: "alice", Spec: JobSpec{Cmd: []string{"./a"}, NP: 1,
		Depend: []Dependency{{Type: DependAfterAny, IDs: []uint64{kept}}}}})

	spec := JobSpec{Cmd: []string{"./flood"}, NP: 1, Env: bigEnv(60 << 10)}
	tasks := make([]int, 99) // with alice's waiting job, 100 queued: the queued limit
	for i := range tasks {
		tasks[i] = i
	}
	var last uint64
	for round := range 10 {
		sp := spec.clone()
		sp.Array = &ArraySpec{Tasks: tasks}
		id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "flood-" + string(rune('a'+round)), Owner: "alice", Spec: sp}).JobID
		h.ok(CmdKillJob, KillJob{ID: id, User: "alice", Array: true})
		last = id + uint64(len(tasks)) - 1
	}
	st := h.f.State()
	all, finished := ownerJobs(st, "alice")
	t.Logf("after 990 killed array tasks: alice holds %d jobs (%d finished); snapshot %d bytes; history %d records",
		all, finished, len(snapshotBytes(t, h.f)), len(st.History))
	if finished > lim.FinishedJobs || all > lim.FinishedJobs+1 {
		t.Fatalf("alice holds %d jobs, %d finished: want at most %d finished", all, finished, lim.FinishedJobs)
	}
	if st.Jobs[last] == nil || st.Jobs[kept] == nil {
		t.Fatalf("the newest task (%d) and the job a queued one depends on (%d) must stay", last, kept)
	}
	for _, id := range bobs {
		if st.Jobs[id] == nil {
			t.Fatalf("bob's finished job %d was pruned by alice's flood", id)
		}
	}
	if n := len(snapshotBytes(t, h.f)); n > 512<<10 {
		t.Fatalf("snapshot is %d bytes after the array flood, want under 512 KiB (the tasks share their spec)", n)
	}
	if len(st.History) < 990-lim.FinishedJobs || st.History[0].Owner != "alice" {
		t.Fatalf("%d history records (first %+v): the pruned jobs leave their records", len(st.History), st.History[0])
	}

	// Single jobs, each with its own copy of the spec.
	for i := range 200 {
		id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "single-" + strings.Repeat("s", i+1), Owner: "alice", Spec: spec.clone()}).JobID
		h.ok(CmdKillJob, KillJob{ID: id, User: "alice"})
	}
	all, finished = ownerJobs(h.f.State(), "alice")
	n := len(snapshotBytes(t, h.f))
	t.Logf("after 200 more killed single jobs: alice holds %d jobs (%d finished); snapshot %d bytes", all, finished, n)
	if finished > lim.FinishedJobs {
		t.Fatalf("alice holds %d finished jobs, want at most %d", finished, lim.FinishedJobs)
	}
	if max := (lim.FinishedJobs + 2) * (61 << 10); n > max {
		t.Fatalf("snapshot is %d bytes, want under %d (the finished limit times the spec)", n, max)
	}
}
