package raftfsm

import (
	"strings"
	"testing"
)

// step is one command of a scenario: want nil means it must succeed; noop that it must be a no-op.
type step struct {
	typ  string
	body any
	want error
	noop bool
}

// Scenarios start with job 1 (alice, np 4) submitted.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	place := func(n int) step {
		return step{typ: CmdPlaceJob, body: PlaceJob{ID: 1, Attempt: n, Hosts: []Host{{Node: "a", NP: 2}, {Node: "b", NP: 2}}}}
	}
	ack := func(n int, node string) step {
		return step{typ: CmdAckReservation, body: AckReservation{ID: 1, Attempt: n, Node: node}}
	}
	start := func(n int) step { return step{typ: CmdStartJob, body: StartJob{ID: 1, Attempt: n}} }
	finish := func(n, code int) step {
		return step{typ: CmdFinishAttempt, body: FinishAttempt{ID: 1, Attempt: n, ExitCode: &code}}
	}
	fail := func(n int, retry bool) step {
		return step{typ: CmdFailAttempt, body: FailAttempt{ID: 1, Attempt: n, Reason: "co-allocation timeout", Retry: retry}}
	}
	kill := func(user string) step { return step{typ: CmdKillJob, body: KillJob{ID: 1, User: user}} }
	launch := func(n int) []step { return []step{place(n), ack(n, "a"), ack(n, "b"), start(n)} }
	seq := func(parts ...[]step) []step {
		var out []step
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	one := func(s step) []step { return []step{s} }
	want := func(s step, err error) step { s.want = err; return s }
	noop := func(s step) step { s.noop = true; return s }

	cases := []struct {
		name        string
		steps       []step
		state       JobState
		attempt     int
		exit        *int
		reasonHas   string
		attemptWant []JobState
	}{
		{"queued", nil, StateQueued, 0, nil, "", nil},
		{"placed", one(place(1)), StateLaunching, 1, nil, "", []JobState{StateLaunching}},
		{"success", seq(launch(1), one(finish(1, 0))), StateDone, 1, ptr(0), "", []JobState{StateDone}},
		{"program fails, no retry", seq(launch(1), one(finish(1, 3))), StateFailed, 1, ptr(3), "exit code 3", []JobState{StateFailed}},
		{"launcher exits before start_job", seq(one(place(1)), one(ack(1, "a")), one(ack(1, "b")), one(finish(1, 0))), StateDone, 1, ptr(0), "", []JobState{StateDone}},
		{"start before all acks", seq(one(place(1)), one(ack(1, "a")), one(want(start(1), ErrNotAcked))), StateLaunching, 1, nil, "", []JobState{StateLaunching}},
		{"finish before all acks", seq(one(place(1)), one(want(finish(1, 0), ErrNotAcked))), StateLaunching, 1, nil, "", []JobState{StateLaunching}},
		{"ack from a node not allocated", seq(one(place(1)), one(want(step{typ: CmdAckReservation, body: AckReservation{ID: 1, Attempt: 1, Node: "c"}}, ErrNotAllocated))), StateLaunching, 1, nil, "", []JobState{StateLaunching}},
		{"co-allocation timeout requeues", seq(one(place(1)), one(ack(1, "a")), one(fail(1, true))), StateQueued, 1, nil, "requeued", []JobState{StateFailed}},
		{"requeue then succeed on attempt 2", seq(launch(1), one(fail(1, true)), launch(2), one(finish(2, 0))), StateDone, 2, ptr(0), "", []JobState{StateFailed, StateDone}},
		{"requeue until max attempts", seq(launch(1), one(fail(1, true)), launch(2), one(fail(2, true)), launch(3), one(fail(3, true))), StateFailed, 3, nil, "attempt 3; 3 failed attempts of max_attempts 3", []JobState{StateFailed, StateFailed, StateFailed}},
		{"no fourth attempt", seq(launch(1), one(fail(1, true)), launch(2), one(fail(2, true)), launch(3), one(fail(3, true)), one(want(place(4), ErrJobTerminal))), StateFailed, 3, nil, "", nil},
		{"fail without retry", seq(launch(1), one(fail(1, false))), StateFailed, 1, nil, "co-allocation timeout", []JobState{StateFailed}},
		{"kill queued by owner", one(kill("alice")), StateKilled, 0, nil, "killed by alice", nil},
		{"kill running by root", seq(launch(1), one(kill("root"))), StateKilled, 1, nil, "killed by root", []JobState{StateKilled}},
		{"kill launching", seq(one(place(1)), one(kill("alice"))), StateKilled, 1, nil, "", []JobState{StateKilled}},
		{"kill by non-owner refused", seq(launch(1), one(want(kill("mallory"), ErrNotOwner))), StateRunning, 1, nil, "", []JobState{StateRunning}},
		{"kill twice", seq(one(kill("alice")), one(noop(kill("alice")))), StateKilled, 0, nil, "", nil},
		{"kill a finished job", seq(launch(1), one(finish(1, 0)), one(want(kill("alice"), ErrJobTerminal))), StateDone, 1, ptr(0), "", nil},
		{"finish after kill refused", seq(launch(1), one(kill("alice")), one(want(finish(1, 0), ErrStaleAttempt))), StateKilled, 1, nil, "", []JobState{StateKilled}},
		{"reject queued", one(step{typ: CmdRejectJob, body: RejectJob{ID: 1, Reason: "no free slots (immediate)"}}), StateFailed, 0, nil, "immediate", nil},
		{"reject running refused", seq(launch(1), one(want(step{typ: CmdRejectJob, body: RejectJob{ID: 1, Reason: "x"}}, ErrWrongState))), StateRunning, 1, nil, "", nil},
		{"re-proposed commands are no-ops", seq(one(place(1)), one(noop(place(1))), one(ack(1, "a")), one(noop(ack(1, "a"))), one(ack(1, "b")), one(start(1)), one(noop(start(1))), one(noop(ack(1, "b"))), one(finish(1, 0)), one(noop(finish(1, 0)))), StateDone, 1, ptr(0), "", []JobState{StateDone}},
		{"re-proposed fail is a no-op", seq(launch(1), one(fail(1, true)), one(noop(fail(1, true)))), StateQueued, 1, nil, "", []JobState{StateFailed}},
		{"different finish after finish refused", seq(launch(1), one(finish(1, 0)), one(want(finish(1, 1), ErrStaleAttempt))), StateDone, 1, ptr(0), "", nil},
		{"unknown job", one(want(step{typ: CmdStartJob, body: StartJob{ID: 99, Attempt: 1}}, ErrNoSuchJob)), StateQueued, 0, nil, "", nil},
		{"node removed under running job", seq(launch(1), one(step{typ: CmdRemoveNode, body: RemoveNode{Node: "b"}})), StateQueued, 1, nil, "node b removed", []JobState{StateFailed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.submit("r1", 4)
			for i, s := range tc.steps {
				if s.want != nil {
					h.refused(s.typ, s.body, s.want)
					continue
				}
				res := h.do(s.typ, s.body)
				if res.Err != nil {
					t.Fatalf("step %d %s: %v", i, s.typ, res.Err)
				}
				if res.Noop != s.noop {
					t.Fatalf("step %d %s: noop = %v, want %v", i, s.typ, res.Noop, s.noop)
				}
			}
			j := h.wantState(1, tc.state)
			if j.Attempt != tc.attempt {
				t.Errorf("attempt = %d, want %d", j.Attempt, tc.attempt)
			}
			if (j.ExitCode == nil) != (tc.exit == nil) || (j.ExitCode != nil && *j.ExitCode != *tc.exit) {
				t.Errorf("exit code = %v, want %v", deref(j.ExitCode), deref(tc.exit))
			}
			if !strings.Contains(j.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not contain %q", j.Reason, tc.reasonHas)
			}
			if tc.attemptWant != nil {
				var got []JobState
				for _, a := range j.Attempts {
					got = append(got, a.State)
				}
				if strings.Join(states(got), ",") != strings.Join(states(tc.attemptWant), ",") {
					t.Errorf("attempt states %v, want %v", got, tc.attemptWant)
				}
			}
		})
	}
}

func TestLifecycle_Timestamps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("r1", 4)   // log 1
	h.launch(id, 1, "a", "b") // logs 2-4
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
	code := 0
	h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &code})
	j := h.job(id)
	sec := func(n int) string { return t0.Add(secs(n)).Format("15:04:05") }
	got := []string{j.SubmittedAt.Format("15:04:05"), j.Attempts[0].PlacedAt.Format("15:04:05"), j.StartedAt.Format("15:04:05"), j.EndedAt.Format("15:04:05")}
	want := []string{sec(1), sec(2), sec(5), sec(6)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("times %v, want %v (from the commands' At)", got, want)
	}
	if h.job(id).Attempts[0].Head != "a" {
		t.Errorf("head defaults to the first host, got %q", j.Attempts[0].Head)
	}
}

func TestSubmit_ExactlyOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.submit("req-A", 4)
	if first != 1 {
		t.Fatalf("first job ID = %d, want 1", first)
	}
	// The client retried after ErrLeadershipLost: the same request gives the same job.
	again := h.do(CmdSubmitJob, SubmitJob{RequestID: "req-A", Owner: "alice", Spec: JobSpec{Cmd: []string{"./ring"}, NP: 4}})
	if again.Err != nil || again.JobID != first || !again.Noop {
		t.Fatalf("resubmit = %+v, want job %d as a no-op", again, first)
	}
	if second := h.submit("req-B", 2); second != 2 {
		t.Fatalf("second job ID = %d, want 2", second)
	}
	h.refused(CmdSubmitJob, SubmitJob{RequestID: "req-A", Owner: "bob", Spec: JobSpec{Cmd: []string{"x"}, NP: 1}}, ErrRequestConflict)
	if n := len(h.f.State().Jobs); n != 2 {
		t.Fatalf("%d jobs, want 2", n)
	}
	if j := h.job(1); j.Spec.MaxAttempts != DefaultMaxAttempts || j.Seq != 1 {
		t.Errorf("defaults: max_attempts %d, seq %d", j.Spec.MaxAttempts, j.Seq)
	}
}

func TestSubmit_Validation(t *testing.T) {
	t.Parallel()
	ok := func() JobSpec { return JobSpec{Cmd: []string{"./a"}, NP: 4} }
	mod := func(f func(*JobSpec)) JobSpec { s := ok(); f(&s); return s }
	bad := -0.5
	cases := []struct {
		name  string
		body  SubmitJob
		field string
	}{
		{"no request id", SubmitJob{Owner: "a", Spec: ok()}, "request_id"},
		{"no owner", SubmitJob{RequestID: "r", Spec: ok()}, "owner"},
		{"no command", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Cmd = nil })}, "spec.cmd"},
		{"empty program", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Cmd = []string{""} })}, "spec.cmd"},
		{"np 0", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.NP = 0 })}, "spec.np"},
		{"ppn > np", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.PPN = 5 })}, "spec.ppn"},
		{"bad env", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Env = []string{"=x"} })}, "spec.env[0]"},
		{"bad mpi", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.MPI = "lam" })}, "spec.mpi"},
		{"negative attempts", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.MaxAttempts = -1 })}, "spec.max_attempts"},
		{"negative timeout", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Timeout = -1 })}, "spec.timeout"},
		{"alpha out of range", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Alpha = &bad })}, "spec.alpha"},
		{"bad hostfile", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Hostfile = []HostSlots{{Host: "", Slots: 1}} })}, "spec.hostfile[0]"},
		{"bad pe", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.PEs = []PENeed{{Kind: "gpu", PerProc: 0}} })}, "spec.pes[0]"},
		{"elastic min > max", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Elastic = &ElasticSpec{MinNP: 8, MaxNP: 2} })}, "spec.elastic"},
		{"np outside elastic", SubmitJob{RequestID: "r", Owner: "a", Spec: mod(func(s *JobSpec) { s.Elastic = &ElasticSpec{MinNP: 8, MaxNP: 16} })}, "spec.np"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			res := h.refused(CmdSubmitJob, tc.body, ErrInvalid)
			if !strings.Contains(res.Err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", res.Err, tc.field)
			}
			if h.f.State().NextJobID != 1 {
				t.Errorf("a refused submit used up an ID")
			}
		})
	}
}

func TestPlace_Validation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("r", 4)
	cases := []struct {
		name string
		body PlaceJob
		want error
	}{
		{"no hosts", PlaceJob{ID: id, Attempt: 1}, ErrInvalid},
		{"too few procs", PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 3}}}, ErrInvalid},
		{"too many procs", PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 3}, {Node: "b", NP: 2}}}, ErrInvalid},
		{"zero procs", PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 4}, {Node: "b", NP: 0}}}, ErrInvalid},
		{"same node twice", PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 2}, {Node: "a", NP: 2}}}, ErrInvalid},
		{"empty node", PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "", NP: 4}}}, ErrInvalid},
		{"head elsewhere", PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 4}}, Head: "z"}, ErrInvalid},
		{"attempt 0", PlaceJob{ID: id, Attempt: 0, Hosts: []Host{{Node: "a", NP: 4}}}, ErrStaleAttempt},
		{"attempt 2 first", PlaceJob{ID: id, Attempt: 2, Hosts: []Host{{Node: "a", NP: 4}}}, ErrStaleAttempt},
		{"no such job", PlaceJob{ID: 42, Attempt: 1, Hosts: []Host{{Node: "a", NP: 4}}}, ErrNoSuchJob},
	}
	for _, tc := range cases {
		h.refused(CmdPlaceJob, tc.body, tc.want)
	}
	h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 1}, {Node: "b", NP: 3}}, Head: "b", Degraded: true, DegradedReason: "oversubscribed b"})
	a := h.job(id).Current()
	if a.Head != "b" || !a.Degraded || a.DegradedReason != "oversubscribed b" || len(a.Pending()) != 2 {
		t.Fatalf("attempt %+v", a)
	}
}

func TestPlace_Elastic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "e", Owner: "alice", Spec: JobSpec{Cmd: []string{"./jacobi"}, NP: 4, Elastic: &ElasticSpec{MinNP: 2, MaxNP: 8, Iterations: 1000}}}).JobID
	h.refused(CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 9}}}, ErrInvalid)
	h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 3}, {Node: "b", NP: 3}}})
}

func ptr(v int) *int { return &v }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func states(s []JobState) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}
