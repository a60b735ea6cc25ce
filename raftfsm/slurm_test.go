package raftfsm

import (
	"strings"
	"testing"
	"time"
)

// Slurm habits: names, begin, hold/release, dependencies, arrays.

func TestSubmit_ArrayMakesOneJobPerTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.submit("first", 4)
	res := h.ok(CmdSubmitJob, SubmitJob{RequestID: "arr", Owner: "alice", Spec: JobSpec{
		Cmd: []string{"./sweep"}, NP: 1, Name: "sweep", Array: &ArraySpec{Tasks: []int{1, 3, 5}, Limit: 2}}})
	if res.JobID != 2 {
		t.Fatalf("array ID = %d, want 2 (its first task's job ID)", res.JobID)
	}
	for i, task := range []int{1, 3, 5} {
		j := h.wantState(uint64(2+i), StateQueued)
		if j.ArrayJobID != 2 || j.ArrayTaskID != task || j.ArrayLimit != 2 || j.Spec.Array != nil || j.Spec.Name != "sweep" {
			t.Errorf("task %d: array %d task %d limit %d spec.array %v name %q", i, j.ArrayJobID, j.ArrayTaskID, j.ArrayLimit, j.Spec.Array, j.Spec.Name)
		}
	}
	if s := h.f.State(); s.NextJobID != 5 {
		t.Fatalf("next job ID = %d, want 5", s.NextJobID)
	}
	// A retried submit finds the array, and creates nothing.
	again := h.ok(CmdSubmitJob, SubmitJob{RequestID: "arr", Owner: "alice", Spec: JobSpec{Cmd: []string{"./sweep"}, NP: 1, Array: &ArraySpec{Tasks: []int{1, 3, 5}}}})
	if !again.Noop || again.JobID != 2 || h.f.State().NextJobID != 5 {
		t.Fatalf("retried array submit = %+v, next %d; want a no-op answering 2", again, h.f.State().NextJobID)
	}
}

func TestSubmit_Refusals(t *testing.T) {
	t.Parallel()
	spec := func(f func(*JobSpec)) JobSpec {
		sp := JobSpec{Cmd: []string{"./x"}, NP: 1}
		f(&sp)
		return sp
	}
	for _, tc := range []struct {
		name string
		spec JobSpec
		want string
	}{
		{"array decreasing", spec(func(s *JobSpec) { s.Array = &ArraySpec{Tasks: []int{5, 1}} }), "must increase"},
		{"array empty", spec(func(s *JobSpec) { s.Array = &ArraySpec{} }), "0 tasks"},
		{"array negative limit", spec(func(s *JobSpec) { s.Array = &ArraySpec{Tasks: []int{0}, Limit: -1} }), "limit"},
		{"array immediate", spec(func(s *JobSpec) { s.Array, s.Immediate = &ArraySpec{Tasks: []int{0}}, true }), "immediate"},
		{"unknown dependency type", spec(func(s *JobSpec) { s.Depend = []Dependency{{Type: "after", IDs: []uint64{1}}} }), "afterok"},
		{"dependency without IDs", spec(func(s *JobSpec) { s.Depend = []Dependency{{Type: DependAfterOK}} }), "needs 1 to"},
		{"singleton with IDs", spec(func(s *JobSpec) { s.Depend = []Dependency{{Type: DependSingleton, IDs: []uint64{1}}} }), "no job IDs"},
		{"future job", spec(func(s *JobSpec) { s.Depend = []Dependency{{Type: DependAfterOK, IDs: []uint64{1 << 40}}} }), "cycle"},
		{"itself", spec(func(s *JobSpec) { s.Depend = []Dependency{{Type: DependAfterAny, IDs: []uint64{2}}} }), "cycle"},
		{"purged job", spec(func(s *JobSpec) { s.Depend = []Dependency{{Type: DependAfterAny, IDs: []uint64{1}}} }), "no job 1"},
		{"name with newline", spec(func(s *JobSpec) { s.Name = "a\nb" }), "control"},
		{"name with slash", spec(func(s *JobSpec) { s.Name = "a/b" }), "slash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.submit("one", 4)
			zero := 0
			h.launch(1, 1, "a", "b")
			h.ok(CmdStartJob, StartJob{ID: 1, Attempt: 1})
			h.ok(CmdFinishAttempt, FinishAttempt{ID: 1, Attempt: 1, ExitCode: &zero})
			h.ok(CmdPurgeJobs, PurgeJobs{IDs: []uint64{1}})
			res := h.refused(CmdSubmitJob, SubmitJob{RequestID: "bad", Owner: "alice", Spec: tc.spec}, ErrInvalid)
			if !strings.Contains(res.Err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", res.Err, tc.want)
			}
		})
	}
}

func TestSubmit_ArrayCountsAgainstQuota(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok(CmdSetLimits, SetLimits{Limits: Limits{QueuedJobs: 5}})
	h.submit("one", 1)
	h.refused(CmdSubmitJob, SubmitJob{RequestID: "arr", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1, Array: &ArraySpec{Tasks: []int{0, 1, 2, 3, 4}}}}, ErrOverLimit)
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "arr", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1, Array: &ArraySpec{Tasks: []int{0, 1, 2, 3}}}})
}

func TestHoldJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("one", 4)
	h.refused(CmdHoldJob, HoldJob{ID: id, User: "bob", Hold: true}, ErrNotOwner)
	h.refused(CmdHoldJob, HoldJob{ID: 9, User: "alice", Hold: true}, ErrNoSuchJob)
	h.refused(CmdHoldJob, HoldJob{ID: id, User: "alice", Hold: true, Array: true}, ErrInvalid)
	if r := h.ok(CmdHoldJob, HoldJob{ID: id, User: "alice", Hold: true}); r.Noop || !h.job(id).Held {
		t.Fatalf("hold: %+v held=%v", r, h.job(id).Held)
	}
	if r := h.ok(CmdHoldJob, HoldJob{ID: id, User: "alice", Hold: true}); !r.Noop {
		t.Fatalf("second hold is not a no-op: %+v", r)
	}
	if r := h.ok(CmdHoldJob, HoldJob{ID: id, User: "root", Hold: false}); r.Noop || h.job(id).Held {
		t.Fatalf("release by root: %+v held=%v", r, h.job(id).Held)
	}
	h.launch(id, 1, "a", "b")
	h.refused(CmdHoldJob, HoldJob{ID: id, User: "alice", Hold: true}, ErrWrongState)
}

func TestArray_HoldAndKillWholeArray(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	arr := h.ok(CmdSubmitJob, SubmitJob{RequestID: "arr", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 4, Array: &ArraySpec{Tasks: []int{0, 1, 2}}}}).JobID
	h.launch(arr+1, 1, "a", "b") // task 1 launches; holding the array skips it
	if r := h.ok(CmdHoldJob, HoldJob{ID: arr, User: "alice", Hold: true, Array: true}); len(r.JobIDs) != 2 {
		t.Fatalf("array hold changed %v, want the 2 queued tasks", r.JobIDs)
	}
	if h.job(arr+1).Held || !h.job(arr).Held || !h.job(arr+2).Held {
		t.Fatal("array hold must hold exactly the queued tasks")
	}
	h.refused(CmdKillJob, KillJob{ID: arr, User: "bob", Array: true}, ErrNotOwner)
	h.refused(CmdKillJob, KillJob{ID: arr + 1, User: "alice", Array: true}, ErrInvalid)
	h.ok(CmdKillJob, KillJob{ID: arr + 2, User: "alice"}) // one task
	h.wantState(arr, StateQueued)
	if r := h.ok(CmdKillJob, KillJob{ID: arr, User: "alice", Array: true}); len(r.JobIDs) != 2 {
		t.Fatalf("array kill killed %v, want the 2 tasks left", r.JobIDs)
	}
	for i := range uint64(3) {
		h.wantState(arr+i, StateKilled)
	}
	if r := h.ok(CmdKillJob, KillJob{ID: arr, User: "alice", Array: true}); !r.Noop {
		t.Fatalf("killing a dead array again: %+v, want a no-op", r)
	}
}

func TestCheckDepend(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	job := func(id uint64, st JobState) *Job {
		return &Job{ID: id, Owner: "alice", State: st, Spec: JobSpec{Name: "n"}}
	}
	for _, tc := range []struct {
		name   string
		others []*Job
		dep    []Dependency
		want   DependOutcome
		reason string
	}{
		{"afterok done", []*Job{job(1, StateDone)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependMet, ""},
		{"afterok running", []*Job{job(1, StateRunning)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependWait, "Dependency: afterok:1: job 1 is running"},
		{"afterok failed", []*Job{job(1, StateFailed)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependNever, "DependencyNeverSatisfied: afterok:1: job 1 failed"},
		{"afterok killed", []*Job{job(1, StateKilled)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependNever, "DependencyNeverSatisfied"},
		{"afterok one of two failed", []*Job{job(1, StateRunning), job(2, StateFailed)}, []Dependency{{DependAfterOK, []uint64{1, 2}}}, DependNever, "job 2 failed"},
		{"afterok gone", nil, []Dependency{{DependAfterOK, []uint64{1}}}, DependNever, "job 1 is gone"},
		{"afternotok failed", []*Job{job(1, StateFailed)}, []Dependency{{DependAfterNotOK, []uint64{1}}}, DependMet, ""},
		{"afternotok done", []*Job{job(1, StateDone)}, []Dependency{{DependAfterNotOK, []uint64{1}}}, DependNever, "DependencyNeverSatisfied: afternotok:1"},
		{"afternotok queued", []*Job{job(1, StateQueued)}, []Dependency{{DependAfterNotOK, []uint64{1}}}, DependWait, "Dependency"},
		{"afterany failed", []*Job{job(1, StateFailed)}, []Dependency{{DependAfterAny, []uint64{1}}}, DependMet, ""},
		{"afterany launching", []*Job{job(1, StateLaunching)}, []Dependency{{DependAfterAny, []uint64{1}}}, DependWait, "launching"},
		{"two conditions", []*Job{job(1, StateDone), job(2, StateRunning)}, []Dependency{{DependAfterOK, []uint64{1}}, {DependAfterAny, []uint64{2}}}, DependWait, "afterany:2"},
		{"singleton earlier running", []*Job{job(1, StateRunning)}, []Dependency{{Type: DependSingleton}}, DependWait, "singleton: job 1"},
		{"singleton earlier done", []*Job{job(1, StateDone)}, []Dependency{{Type: DependSingleton}}, DependMet, ""},
		{"singleton later queued", []*Job{job(20, StateQueued)}, []Dependency{{Type: DependSingleton}}, DependMet, ""},
		{"singleton other name", []*Job{{ID: 1, Owner: "alice", State: StateRunning, Spec: JobSpec{Name: "m"}}}, []Dependency{{Type: DependSingleton}}, DependMet, ""},
		{"singleton other owner", []*Job{{ID: 1, Owner: "bob", State: StateRunning, Spec: JobSpec{Name: "n"}}}, []Dependency{{Type: DependSingleton}}, DependMet, ""},
		{"array all done", []*Job{arrayTask(1, 1, StateDone), arrayTask(2, 1, StateDone)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependMet, ""},
		{"array one running", []*Job{arrayTask(1, 1, StateDone), arrayTask(2, 1, StateRunning)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependWait, "job 2 is running"},
		{"array one failed", []*Job{arrayTask(1, 1, StateQueued), arrayTask(2, 1, StateFailed)}, []Dependency{{DependAfterOK, []uint64{1}}}, DependNever, "job 2 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewState()
			for _, o := range tc.others {
				s.Jobs[o.ID] = o
			}
			j := job(10, StateQueued)
			j.Spec.Depend, j.SubmittedAt = tc.dep, at
			s.Jobs[10] = j
			got, reason := CheckDepend(s, j, ArrayTasks(s))
			if got != tc.want || !strings.Contains(reason, tc.reason) || (tc.reason == "") != (reason == "") {
				t.Fatalf("CheckDepend = %v %q, want %v %q", got, reason, tc.want, tc.reason)
			}
		})
	}
}

func arrayTask(id, array uint64, st JobState) *Job {
	return &Job{ID: id, Owner: "alice", State: st, ArrayJobID: array, ArrayTaskID: int(id - array)}
}

func TestPurgeCandidates_KeepJobsOthersDependOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	zero := 0
	for _, id := range []uint64{h.submit("a", 4), h.submit("b", 4)} {
		h.launch(id, 1, "a", "b")
		h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
		h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &zero})
	}
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "c", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1,
		Depend: []Dependency{{Type: DependAfterOK, IDs: []uint64{2}}}, Begin: t0.Add(24 * time.Hour)}})
	got := PurgeCandidates(h.f.State(), t0.Add(48*time.Hour), time.Hour)
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("purge candidates = %v, want [1]: job 2 decides job 3's fate", got)
	}
}
