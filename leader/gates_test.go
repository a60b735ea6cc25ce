package leader

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// finishJob runs job id's first attempt on n1 to exit code.
func finishJob(w *world, id uint64, code int) {
	placeAndAck(w, id, []string{"n1"}, "n1")
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
	w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: 1, ExitCode: &code})
}

func TestSchedule_Gates(t *testing.T) {
	t.Parallel()
	one := raftfsm.JobSpec{NP: 1, MPI: "none"}
	with := func(f func(*raftfsm.JobSpec)) raftfsm.JobSpec { s := one; f(&s); return s }
	for _, tc := range []struct {
		name  string
		setup func(w *world)
		want  []string
	}{
		{name: "held job waits, the one behind it is placed", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Priority = 5 }))
			submit(w, "b", one)
			w.do(raftfsm.CmdHoldJob, raftfsm.HoldJob{ID: 1, User: "alice", Hold: true})
		}, want: []string{`set_wait_reason {"id":1,"reason":"JobHeldUser: held; 'shoal release 1' lets it run"}`, `place_job {"id":2,`}},
		{name: "released job is placed", setup: func(w *world) {
			submit(w, "a", one)
			w.do(raftfsm.CmdHoldJob, raftfsm.HoldJob{ID: 1, User: "alice", Hold: true})
			w.do(raftfsm.CmdHoldJob, raftfsm.HoldJob{ID: 1, User: "alice", Hold: false})
		}, want: []string{`place_job {"id":1,`}},
		{name: "begin in the future: waits", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Begin = t0.Add(time.Hour) }))
		}, want: []string{`set_wait_reason {"id":1,"reason":"BeginTime: not before 2026-`}},
		{name: "begin reached: placed", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Begin = t0.Add(time.Hour) }))
			w.now = t0.Add(time.Hour)
		}, want: []string{`place_job {"id":1,`}},
		{name: "afterok on a running job: waits", setup: func(w *world) {
			submit(w, "a", one)
			placeAndAck(w, 1, []string{"n1"}, "n1")
			w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
			submit(w, "b", with(func(s *raftfsm.JobSpec) { s.Depend = []raftfsm.Dependency{{Type: "afterok", IDs: []uint64{1}}} }))
		}, want: []string{`set_wait_reason {"id":2,"reason":"Dependency: afterok:1: job 1 is running"}`}},
		{name: "afterok on a done job: placed", setup: func(w *world) {
			submit(w, "a", one)
			finishJob(w, 1, 0)
			submit(w, "b", with(func(s *raftfsm.JobSpec) { s.Depend = []raftfsm.Dependency{{Type: "afterok", IDs: []uint64{1}}} }))
		}, want: []string{`place_job {"id":2,`}},
		{name: "afterok on a failed job: never satisfied", setup: func(w *world) {
			submit(w, "a", one)
			submit(w, "b", with(func(s *raftfsm.JobSpec) { s.Depend = []raftfsm.Dependency{{Type: "afterok", IDs: []uint64{1}}} }))
			finishJob(w, 1, 3)
		}, want: []string{`reject_job {"id":2,"reason":"DependencyNeverSatisfied: afterok:1: job 1 failed"}`}},
		{name: "afternotok on a failed job: placed", setup: func(w *world) {
			submit(w, "a", one)
			finishJob(w, 1, 3)
			submit(w, "b", with(func(s *raftfsm.JobSpec) { s.Depend = []raftfsm.Dependency{{Type: "afternotok", IDs: []uint64{1}}} }))
		}, want: []string{`place_job {"id":2,`}},
		{name: "singleton waits for the earlier job of its name", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Name = "x" }))
			submit(w, "b", with(func(s *raftfsm.JobSpec) { s.Name = "x"; s.Depend = []raftfsm.Dependency{{Type: "singleton"}} }))
		}, want: []string{`place_job {"id":1,`, `set_wait_reason {"id":2,"reason":"Dependency: singleton: job 1 of alice named \"x\" runs first"}`}},
		{name: "array limit: at most 2 tasks at once", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Array = &raftfsm.ArraySpec{Tasks: []int{0, 1, 2, 3}, Limit: 2} }))
		}, want: []string{`place_job {"id":1,`, `place_job {"id":2,`,
			`set_wait_reason {"id":3,"reason":"JobArrayTaskLimit: 2 of array 1's tasks at once"}`, `set_wait_reason {"id":4,"reason":"JobArrayTaskLimit`}},
		{name: "array limit counts running tasks", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Array = &raftfsm.ArraySpec{Tasks: []int{0, 1, 2}, Limit: 2} }))
			placeAndAck(w, 1, []string{"n1"}, "n1")
			placeAndAck(w, 2, []string{"n2"}, "n2")
		}, want: []string{`start_job {"id":1,`, `start_job {"id":2,`, `set_wait_reason {"id":3,"reason":"JobArrayTaskLimit`}},
		{name: "array limit frees a slot when a task ends", setup: func(w *world) {
			submit(w, "a", with(func(s *raftfsm.JobSpec) { s.Array = &raftfsm.ArraySpec{Tasks: []int{0, 1, 2}, Limit: 2} }))
			placeAndAck(w, 1, []string{"n1"}, "n1")
			finishJob(w, 2, 0)
		}, want: []string{`start_job {"id":1,`, `place_job {"id":3,`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "n1", "n2", "n3")
			tc.setup(w)
			cmds, _ := Schedule(w.view(), JobsBook{})
			wantCommands(t, cmds, tc.want)
		})
	}
}
