package raftfsm

import (
	"errors"
	"math"
	"testing"
)

// TestCPUsPerRankCountsCPUs is a user who asks for one rank of 8 CPUs instead of 8 ranks: the
// per-user limit, the slots the job holds and its fair-share usage count 8 cores, as for 8 ranks.
func TestCPUsPerRankCountsCPUs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok(CmdSetLimits, SetLimits{Limits: Limits{Procs: 8}})
	wide := h.ok(CmdSubmitJob, SubmitJob{RequestID: "wide", Owner: "alice", Spec: JobSpec{Cmd: []string{"./omp"}, NP: 1, CPUsPerRank: 8}}).JobID
	res := h.refused(CmdSubmitJob, SubmitJob{RequestID: "more", Owner: "alice", Spec: JobSpec{Cmd: []string{"./omp"}, NP: 1}}, ErrOverLimit)
	if !errors.Is(res.Err, ErrOverLimit) {
		t.Fatal(res.Err)
	}
	h.refused(CmdSubmitJob, SubmitJob{RequestID: "arr", Owner: "bob", Spec: JobSpec{Cmd: []string{"./omp"}, NP: 1, CPUsPerRank: 3,
		Array: &ArraySpec{Tasks: []int{0, 1, 2}}}}, ErrOverLimit) // 3 tasks × 3 CPUs = 9
	narrow := h.ok(CmdSubmitJob, SubmitJob{RequestID: "narrow", Owner: "bob", Spec: JobSpec{Cmd: []string{"./mpi"}, NP: 8}}).JobID

	h.ok(CmdPlaceJob, PlaceJob{ID: wide, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 1}}})
	h.ok(CmdPlaceJob, PlaceJob{ID: narrow, Attempt: 1, Hosts: []Host{{Node: "n2", NP: 8}}})
	if held := HeldSlots(h.f.State()); held["n1"] != 8 || held["n2"] != 8 {
		t.Fatalf("held slots %v: one rank of 8 CPUs holds 8 cores, as 8 ranks do", held)
	}
	for _, id := range []uint64{wide, narrow} {
		node := map[uint64]string{wide: "n1", narrow: "n2"}[id]
		h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: 1, Node: node})
		h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
	}
	st := h.f.State()
	u := RecentUsage(st, st.Jobs[wide].StartedAt.Add(3600e9), 0)
	if u["alice"] <= 0 || math.Abs(u["alice"]-u["bob"])/u["bob"] > 0.01 {
		t.Fatalf("an hour of 1 rank × 8 CPUs used %.0f core-seconds, of 8 ranks %.0f: want the same", u["alice"], u["bob"])
	}
}
