package raftfsm

import "testing"

// Attempt 1 of a job ran on a and b, was failed (its node looked dead) and requeued; attempt 2 now
// runs on c and d. Every message of attempt 1 that arrives late must be refused and change nothing.
func TestFencing_StaleAttemptChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("r", 4)
	h.launch(id, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
	h.ok(CmdFailAttempt, FailAttempt{ID: id, Attempt: 1, Reason: "node b silent", Retry: true})

	// Between attempts: attempt 1 is still the number on the job, but it ended.
	zero := 0
	h.refused(CmdAckReservation, AckReservation{ID: id, Attempt: 1, Node: "a"}, ErrStaleAttempt)
	h.refused(CmdStartJob, StartJob{ID: id, Attempt: 1}, ErrStaleAttempt)
	h.refused(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &zero}, ErrStaleAttempt)
	h.refused(CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 4}}}, ErrStaleAttempt)

	h.launch(id, 2, "c", "d")
	stale := []struct {
		typ  string
		body any
	}{
		{CmdAckReservation, AckReservation{ID: id, Attempt: 1, Node: "a"}},
		{CmdStartJob, StartJob{ID: id, Attempt: 1}},
		{CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 1, ExitCode: &zero}},
		{CmdFailAttempt, FailAttempt{ID: id, Attempt: 1, Reason: "late", Retry: true}},
		{CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: 4}}}},
		// A future attempt while attempt 2 is live: would make two live attempts.
		{CmdPlaceJob, PlaceJob{ID: id, Attempt: 3, Hosts: []Host{{Node: "e", NP: 4}}}},
		{CmdAckReservation, AckReservation{ID: id, Attempt: 3, Node: "e"}},
		{CmdStartJob, StartJob{ID: id, Attempt: 3}},
		// The current attempt placed again elsewhere (a deposed leader's decision).
		{CmdPlaceJob, PlaceJob{ID: id, Attempt: 2, Hosts: []Host{{Node: "e", NP: 4}}}},
	}
	for _, s := range stale {
		h.refused(s.typ, s.body, ErrStaleAttempt)
	}
	// The fence does not stop the live attempt.
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 2})
	h.ok(CmdFinishAttempt, FinishAttempt{ID: id, Attempt: 2, ExitCode: &zero})
	j := h.wantState(id, StateDone)
	if j.Attempts[0].State != StateFailed || j.Attempts[0].Reason != "node b silent" {
		t.Fatalf("attempt 1 rewritten: %+v", j.Attempts[0])
	}
	// A stale fail after the job ended must not requeue it.
	h.refused(CmdFailAttempt, FailAttempt{ID: id, Attempt: 2, Reason: "late", Retry: true}, ErrStaleAttempt)
}

// remove_node fails only the attempts that hold the node, and only live ones.
func TestRemoveNode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	j1, j2, j3, j4 := h.submit("1", 4), h.submit("2", 4), h.submit("3", 4), h.submit("4", 4)
	h.launch(j1, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: j1, Attempt: 1})
	h.launch(j2, 1, "b", "c") // launching, holds b
	h.launch(j3, 1, "c", "d") // does not hold b
	h.launch(j4, 1, "b", "d")
	h.ok(CmdKillJob, KillJob{ID: j4, User: "alice"}) // ended: untouched
	h.ok(CmdProbeRestart, ProbeRestart{Node: "b", Kind: ProbeLatency, Reason: "crashed"})
	h.ok(CmdProbeRestart, ProbeRestart{Node: "c", Kind: ProbeLatency, Reason: "crashed"})
	h.ok(CmdSetProbeDuties, SetProbeDuties{Cycle: 1, Rounds: [][]Test{{{"a", "b"}, {"c", "d"}}, {{"a", "c"}, {"b", "d"}}}})

	res := h.ok(CmdRemoveNode, RemoveNode{Node: "b"})
	if len(res.JobIDs) != 2 || res.JobIDs[0] != j1 || res.JobIDs[1] != j2 {
		t.Fatalf("affected jobs %v, want [%d %d]", res.JobIDs, j1, j2)
	}
	h.wantState(j1, StateQueued)
	h.wantState(j2, StateQueued)
	h.wantState(j3, StateLaunching)
	h.wantState(j4, StateKilled)
	st := h.f.State()
	if _, ok := st.Probes[ProbeKey{"b", ProbeLatency}]; ok {
		t.Errorf("probe record of the removed node kept")
	}
	if _, ok := st.Probes[ProbeKey{"c", ProbeLatency}]; !ok {
		t.Errorf("probe record of another node dropped")
	}
	want := [][]Test{{{"c", "d"}}, {{"a", "c"}}}
	if !equalRounds(st.ProbeDuties.Rounds, want) || st.ProbeDuties.Cycle != 1 {
		t.Errorf("duties %+v, want %v", st.ProbeDuties, want)
	}
	if again := h.ok(CmdRemoveNode, RemoveNode{Node: "b"}); !again.Noop || len(again.JobIDs) != 0 {
		t.Errorf("second remove_node = %+v, want a no-op", again)
	}
}
