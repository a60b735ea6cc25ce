package raftfsm

import "testing"

// record_step numbers an attempt's steps in order from 0, records the
// start's command and nodes and the end's status, treats a retried start
// or end as a no-op, and refuses steps out of order, unknown attempts and
// an empty command.
func TestRecordStep(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	j1 := h.submit("1", 4)
	h.launch(j1, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: j1, Attempt: 1})
	h.ok(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 0, Cmd: []string{"mpiexec", "./a.out"}, Nodes: "a,b"})
	if r := h.ok(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 0, Cmd: []string{"mpiexec", "./a.out"}}); !r.Noop {
		t.Errorf("a retried start = %+v, want a no-op", r)
	}
	h.refused(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 2, Cmd: []string{"mpirun"}}, ErrInvalid)
	h.refused(CmdRecordStep, RecordStep{ID: j1, Attempt: 2, Step: 0, Cmd: []string{"mpirun"}}, ErrInvalid)
	h.refused(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 1}, ErrInvalid)
	h.refused(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 1, End: true}, ErrInvalid)
	three := 3
	h.ok(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 0, End: true, ExitCode: &three})
	if r := h.ok(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 0, End: true}); !r.Noop {
		t.Errorf("a second end = %+v, want a no-op", r)
	}
	h.ok(CmdRecordStep, RecordStep{ID: j1, Attempt: 1, Step: 1, Cmd: []string{"mpirun"}})
	st := h.job(j1).Attempts[0].Steps
	if len(st) != 2 || st[0].N != 0 || st[0].Cmd[1] != "./a.out" || st[0].Nodes != "a,b" || st[0].ExitCode == nil || *st[0].ExitCode != 3 ||
		st[0].EndedAt.IsZero() || st[1].N != 1 || !st[1].EndedAt.IsZero() || st[1].ExitCode != nil {
		t.Fatalf("steps %+v, want step 0 ended with 3, step 1 running", st)
	}
}
