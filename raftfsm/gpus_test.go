package raftfsm

import (
	"slices"
	"testing"
)

// TestAckBindsGPUs: a node acknowledges the GPUs it hands an attempt;
// the state keeps them and refuses an index another live attempt holds
// on the node, or a count other than what the processes there need.
func TestAckBindsGPUs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gpu := func(req string) uint64 {
		return h.ok(CmdSubmitJob, SubmitJob{RequestID: req, Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 2, PEs: []PENeed{{Kind: "gpu", PerProc: 1}}}}).JobID
	}
	one, two := gpu("one"), gpu("two")
	h.ok(CmdPlaceJob, PlaceJob{ID: one, Attempt: 1, Hosts: []Host{{Node: "a", NP: 1}, {Node: "b", NP: 1}}})
	h.ok(CmdPlaceJob, PlaceJob{ID: two, Attempt: 1, Hosts: []Host{{Node: "a", NP: 2}}})
	h.refused(CmdAckReservation, AckReservation{ID: one, Attempt: 1, Node: "a", GPUs: []int{0, 1}}, ErrInvalid)
	h.refused(CmdAckReservation, AckReservation{ID: two, Attempt: 1, Node: "a", GPUs: []int{3, 3}}, ErrInvalid)
	h.refused(CmdAckReservation, AckReservation{ID: two, Attempt: 1, Node: "a", GPUs: []int{-1, 2}}, ErrInvalid)
	h.ok(CmdAckReservation, AckReservation{ID: one, Attempt: 1, Node: "a", GPUs: []int{1}})
	h.refused(CmdAckReservation, AckReservation{ID: two, Attempt: 1, Node: "a", GPUs: []int{1, 2}}, ErrInvalid)
	h.ok(CmdAckReservation, AckReservation{ID: two, Attempt: 1, Node: "a", GPUs: []int{2, 0}})
	if got := h.job(two).Current().GPUsOn("a"); !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("job %d holds GPUs %v on a, want [0 2]", two, got)
	}
	if used := GPUsInUse(h.f.State(), "a", 0); len(used) != 3 {
		t.Fatalf("in use on a: %v, want 0, 1 and 2", used)
	}
	// Once the first job ends, its GPU may go to another.
	h.ok(CmdKillJob, KillJob{ID: one, User: "alice"})
	if used := GPUsInUse(h.f.State(), "a", 0); used[1] {
		t.Fatalf("a killed job still holds GPU 1: %v", used)
	}
}
