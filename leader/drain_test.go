package leader

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestSchedule_Drain(t *testing.T) {
	t.Parallel()
	// running has job 1 running on n1 and n2 (one process each).
	running := func(w *world) {
		submit(w, "a", raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none"})
		placeAndAck(w, 1, []string{"n1", "n2"}, "n1", "n2")
		w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
	}
	for _, tc := range []struct {
		name    string
		setup   func(w *world)
		after   time.Duration
		want    []string
		wantNot []string
	}{
		{name: "a drained node gets no new job, the others do", setup: func(w *world) {
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2"})
			submit(w, "a", raftfsm.JobSpec{NP: 8, PPN: 4, MPI: "none"})
		}, want: []string{`place_job {"id":1,"attempt":1,"hosts":[{"node":"n1","procs":4},{"node":"n3","procs":4}]}`}},
		{name: "a job that needs the drained node waits", setup: func(w *world) {
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2"})
			submit(w, "a", raftfsm.JobSpec{NP: 12, PPN: 4, MPI: "none"})
		}, want: []string{`set_wait_reason {"id":1,`}, wantNot: []string{"place_job"}},
		{name: "a hostfile job naming the drained node waits, not rejected", setup: func(w *world) {
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2"})
			submit(w, "a", raftfsm.JobSpec{NP: 1, MPI: "none", Relax: "none", Hostfile: []raftfsm.HostSlots{{Host: "n2", Slots: 1}}})
		}, want: []string{`set_wait_reason {"id":1,"reason":"hostfile names node n2, which is drained"}`}},
		{name: "undrained: placed on it again", setup: func(w *world) {
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2"})
			w.do(raftfsm.CmdUndrainNode, raftfsm.UndrainNode{Node: "n2"})
			submit(w, "a", raftfsm.JobSpec{NP: 12, PPN: 4, MPI: "none"})
		}, want: []string{`place_job {"id":1,"attempt":1,`}},
		{name: "running job on a drained node without deadline: left alone", setup: func(w *world) {
			running(w)
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2"})
		}, after: 365 * 24 * time.Hour},
		{name: "before the deadline: left alone", setup: func(w *world) {
			running(w)
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2", Deadline: time.Minute})
		}, after: time.Minute - time.Millisecond},
		{name: "past the deadline: failed with retry", setup: func(w *world) {
			running(w)
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2", Deadline: time.Minute})
		}, after: time.Minute,
			want: []string{`fail_attempt {"id":1,"attempt":1,"reason":"node n2 drained: its deadline 2026-01-01T00:01:00Z passed under attempt 1","retry":true}`}},
		{name: "past the deadline of another node: left alone", setup: func(w *world) {
			running(w)
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n3", Deadline: time.Minute})
		}, after: time.Hour},
		{name: "launching attempt past the deadline: failed too", setup: func(w *world) {
			submit(w, "a", raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none"})
			placeAndAck(w, 1, []string{"n1", "n2"}, "n1")
			w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2", Deadline: time.Second})
		}, after: 2 * time.Second, want: []string{`"reason":"node n2 drained: its deadline`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "n1", "n2", "n3")
			tc.setup(w)
			w.now = w.now.Add(tc.after)
			cmds, _ := Schedule(w.view(), JobsBook{})
			wantCommands(t, cmds, tc.want)
			for _, no := range tc.wantNot {
				if contains(commands(cmds), no) {
					t.Errorf("commands %q, want no %s", commands(cmds), no)
				}
			}
		})
	}
}

// After the deadline the job is requeued and placed off the drained node
// in the next round, as after a node loss.
func TestSchedule_DrainDeadlineRequeuesElsewhere(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2", "n3")
	submit(w, "a", raftfsm.JobSpec{NP: 2, PPN: 1, MPI: "none"})
	placeAndAck(w, 1, []string{"n1", "n2"}, "n1", "n2")
	w.do(raftfsm.CmdStartJob, raftfsm.StartJob{ID: 1, Attempt: 1})
	w.do(raftfsm.CmdDrainNode, raftfsm.DrainNode{Node: "n2", Deadline: time.Second})
	w.advance(time.Second)
	w.round()
	if j := w.st.Jobs[1]; j.State != raftfsm.StateQueued && j.Attempt != 2 {
		t.Fatalf("job 1 after the deadline: %s attempt %d, want requeued", j.State, j.Attempt)
	}
	w.advance(time.Second)
	w.round()
	a := w.st.Jobs[1].Current()
	if a == nil || a.N != 2 || a.Holds("n2") {
		t.Fatalf("attempt after the requeue = %+v, want attempt 2 off n2\n%s", a, w.out.String())
	}
}
