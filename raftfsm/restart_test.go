package raftfsm

import (
	"slices"
	"testing"
)

// node_restarted fails the attempts the node had joined (running, or its reservation
// acknowledged), leaves alone the attempts it has not acknowledged yet and those of other nodes,
// and repeats as a no-op.
func TestNodeRestarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	j1, j2, j3, j4 := h.submit("1", 4), h.submit("2", 4), h.submit("3", 4), h.submit("4", 4)
	h.launch(j1, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: j1, Attempt: 1}) // running on b
	h.ok(CmdPlaceJob, PlaceJob{ID: j2, Attempt: 1, Hosts: []Host{{Node: "b", NP: 2}, {Node: "c", NP: 2}}})
	h.ok(CmdAckReservation, AckReservation{ID: j2, Attempt: 1, Node: "b"}) // launching, b acked
	h.ok(CmdPlaceJob, PlaceJob{ID: j3, Attempt: 1, Hosts: []Host{{Node: "b", NP: 2}, {Node: "c", NP: 2}}})
	h.ok(CmdAckReservation, AckReservation{ID: j3, Attempt: 1, Node: "c"}) // launching, b not acked yet
	h.launch(j4, 1, "c", "d")                                              // does not hold b

	res := h.ok(CmdNodeRestarted, NodeRestarted{Node: "b"})
	if len(res.JobIDs) != 2 || res.JobIDs[0] != j1 || res.JobIDs[1] != j2 {
		t.Fatalf("affected jobs %v, want [%d %d]", res.JobIDs, j1, j2)
	}
	j := h.wantState(j1, StateQueued)
	if a := j.Attempts[0]; a.State != StateFailed || a.Reason == "" {
		t.Errorf("attempt 1 of job %d = %s %q, want failed with a reason", j1, a.State, a.Reason)
	}
	h.wantState(j2, StateQueued)
	h.wantState(j3, StateLaunching)
	h.wantState(j4, StateLaunching)
	if again := h.ok(CmdNodeRestarted, NodeRestarted{Node: "b"}); !again.Noop || len(again.JobIDs) != 0 {
		t.Errorf("second node_restarted = %+v, want a no-op", again)
	}
	h.refused(CmdNodeRestarted, NodeRestarted{}, ErrInvalid)
}

// An attempt that runs on the restarted node alone and that it adopted stays running; one it lists
// but does not head, that has hosts elsewhere too, or at another attempt number, fails as if it
// were not listed.
func TestNodeRestartedKeepsAdoptedAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	j1, j2, j3, j4 := h.submit("1", 1), h.submit("2", 4), h.submit("3", 1), h.submit("4", 4)
	single := func(id uint64) {
		h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "b", NP: 1}}})
		h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: 1, Node: "b"})
		h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
	}
	single(j1)
	h.launch(j2, 1, "c", "b")
	h.ok(CmdStartJob, StartJob{ID: j2, Attempt: 1}) // headed by c
	single(j3)
	h.launch(j4, 1, "b", "d")
	h.ok(CmdStartJob, StartJob{ID: j4, Attempt: 1}) // headed by b, ranks on d too

	res := h.ok(CmdNodeRestarted, NodeRestarted{Node: "b", Adopted: []AttemptRef{{j1, 1}, {j2, 1}, {j3, 2}, {j4, 1}}})
	if !slices.Equal(res.JobIDs, []uint64{j2, j3, j4}) {
		t.Fatalf("affected jobs %v, want [%d %d %d]", res.JobIDs, j2, j3, j4)
	}
	h.wantState(j1, StateRunning)
	h.wantState(j2, StateQueued)
	h.wantState(j3, StateQueued)
	h.wantState(j4, StateQueued)
}
