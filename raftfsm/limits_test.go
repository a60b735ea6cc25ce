package raftfsm

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func submitOf(owner, req string, np int) SubmitJob {
	return SubmitJob{RequestID: req, Owner: owner, Spec: JobSpec{Cmd: []string{"./ring"}, NP: np}}
}

// TestLimitsQueuedJobs: a user at the queued-jobs limit is refused with ErrOverLimit and nothing
// changes; other users are not; a re-proposal of a committed submit stays a no-op; a job that
// leaves the queue frees a place.
func TestLimitsQueuedJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if h.f.State().Limits != (Limits{}) {
		t.Fatal("a new FSM has limits before the leader writes them")
	}
	h.ok(CmdSetLimits, SetLimits{Limits: Limits{QueuedJobs: 2}})
	a1 := h.ok(CmdSubmitJob, submitOf("alice", "a1", 4)).JobID
	h.ok(CmdSubmitJob, submitOf("alice", "a2", 4))
	res := h.refused(CmdSubmitJob, submitOf("alice", "a3", 4), ErrOverLimit)
	if !strings.Contains(res.Err.Error(), "--max-queued-jobs") || !strings.Contains(res.Err.Error(), "alice has 2 queued jobs") {
		t.Errorf("refusal %q does not say which limit and flag", res.Err)
	}
	if Code(res.Err) != "over_limit" {
		t.Errorf("code %q, want over_limit", Code(res.Err))
	}
	h.ok(CmdSubmitJob, submitOf("bob", "b1", 4))
	if !h.ok(CmdSubmitJob, submitOf("alice", "a1", 4)).Noop {
		t.Error("re-proposed submit of a committed job is not a no-op at the limit")
	}
	h.launch(a1, 1, "n1", "n2") // launching: no longer queued
	h.ok(CmdSubmitJob, submitOf("alice", "a3", 4))
}

func TestLimitsProcs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok(CmdSetLimits, SetLimits{Limits: Limits{Procs: 10}})
	id := h.ok(CmdSubmitJob, submitOf("alice", "a1", 6)).JobID
	h.launch(id, 1, "n1", "n2") // live jobs still count
	res := h.refused(CmdSubmitJob, submitOf("alice", "a2", 5), ErrOverLimit)
	if !strings.Contains(res.Err.Error(), "--max-user-procs") {
		t.Errorf("refusal %q does not name the flag", res.Err)
	}
	h.ok(CmdSubmitJob, submitOf("alice", "a3", 4))
	h.ok(CmdKillJob, KillJob{ID: id, User: "alice"}) // ended jobs do not count
	h.ok(CmdSubmitJob, submitOf("alice", "a2", 5))
}

func TestLimitsSpec(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok(CmdSetLimits, SetLimits{Limits: Limits{SpecBytes: 300, Argv: 3, Env: 2}})
	cases := map[string]JobSpec{
		"--max-argv":       {Cmd: []string{"a", "b", "c", "d"}, NP: 1},
		"--max-env":        {Cmd: []string{"a"}, Env: []string{"A=1", "B=2", "C=3"}, NP: 1},
		"--max-spec-bytes": {Cmd: []string{strings.Repeat("x", 400)}, NP: 1},
	}
	for flag, sp := range cases {
		res := h.refused(CmdSubmitJob, SubmitJob{RequestID: flag, Owner: "alice", Spec: sp}, ErrInvalid)
		if !strings.Contains(res.Err.Error(), flag) {
			t.Errorf("%s: refusal %q does not name the flag", flag, res.Err)
		}
	}
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "fits", Owner: "alice", Spec: JobSpec{Cmd: []string{"a", "b", "c"}, Env: []string{"A=1", "B=2"}, NP: 1}})
}

func TestSetLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.refused(CmdSetLimits, SetLimits{Limits: Limits{QueuedJobs: -1}}, ErrInvalid)
	h.ok(CmdSetLimits, SetLimits{Limits: DefaultLimits()})
	if !h.ok(CmdSetLimits, SetLimits{Limits: DefaultLimits()}).Noop {
		t.Error("same limits twice is not a no-op")
	}
	snap := snapshotBytes(t, h.f)
	g := New()
	if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if g.State().Limits != DefaultLimits() {
		t.Fatalf("limits after restore: %+v", g.State().Limits)
	}
}

func TestValidateSpecMatchesSubmit(t *testing.T) {
	t.Parallel()
	long := JobSpec{Cmd: []string{"x"}, Env: []string{"K=" + strings.Repeat("v", maxStringLen)}, NP: 1}
	if err := ValidateSpec(long); err == nil {
		t.Fatal("ValidateSpec accepted an env entry over the length bound")
	}
	h := newHarness(t)
	h.refused(CmdSubmitJob, SubmitJob{RequestID: "r", Owner: "alice", Spec: long}, ErrInvalid)
	ok := JobSpec{Cmd: []string{"x"}, NP: 1}
	if err := ValidateSpec(ok); err != nil || ok.MaxAttempts != 0 {
		t.Fatalf("ValidateSpec(%+v) = %v, or it changed its argument", ok, err)
	}
}
