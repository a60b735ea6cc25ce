package raftfsm

import (
	"math"
	"testing"
)

// Counts whose sum wraps around must not slip past the
// bounds, neither in a submitted hostfile nor in an allocation.
func TestOverflowingCountsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.refused(CmdSubmitJob, SubmitJob{RequestID: "wrap", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1,
		Hostfile: []HostSlots{{Host: "a", Slots: math.MaxInt}, {Host: "b", Slots: math.MaxInt}, {Host: "c", Slots: 3}}}}, ErrInvalid)
	h.refused(CmdSubmitJob, SubmitJob{RequestID: "big", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1,
		Hostfile: []HostSlots{{Host: "a", Slots: MaxNP}, {Host: "b", Slots: 1}}}}, ErrInvalid)
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "fine", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 2,
		Hostfile: []HostSlots{{Host: "a", Slots: MaxNP - 1}, {Host: "b", Slots: 1}}}})
	id := h.submit("ok", 1)
	h.refused(CmdPlaceJob, PlaceJob{ID: id, Attempt: 1, Hosts: []Host{{Node: "a", NP: math.MaxInt}, {Node: "b", NP: math.MaxInt}, {Node: "c", NP: 3}}}, ErrInvalid)
	h.wantState(id, StateQueued)
}
