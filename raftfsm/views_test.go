package raftfsm

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

func TestHeldSlots(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	j1, j2, j3, j4, j5 := h.submit("1", 4), h.submit("2", 4), h.submit("3", 4), h.submit("4", 6), h.submit("5", 4)
	h.launch(j1, 1, "a", "b")
	h.ok(CmdStartJob, StartJob{ID: j1, Attempt: 1})                                                        // running: a2 b2
	h.ok(CmdPlaceJob, PlaceJob{ID: j2, Attempt: 1, Hosts: []Host{{Node: "b", NP: 1}, {Node: "c", NP: 3}}}) // launching, no acks yet: still held
	h.launch(j3, 1, "a", "c")
	code := 0
	h.ok(CmdFinishAttempt, FinishAttempt{ID: j3, Attempt: 1, ExitCode: &code}) // done: released
	h.launch(j4, 1, "d", "a")
	h.ok(CmdFailAttempt, FailAttempt{ID: j4, Attempt: 1, Reason: "x", Retry: true}) // requeued: released
	_ = j5                                                                          // queued: holds nothing
	got := HeldSlots(h.f.State())
	want := map[string]int{"a": 2, "b": 3, "c": 3}
	if !maps.Equal(got, want) {
		t.Fatalf("HeldSlots = %v, want %v", got, want)
	}
	if ids := JobsOn(h.f.State(), "b"); !slices.Equal(ids, []uint64{j1, j2}) {
		t.Fatalf("JobsOn(b) = %v", ids)
	}
	h.ok(CmdKillJob, KillJob{ID: j1, User: "alice"})
	if got := HeldSlots(h.f.State()); !maps.Equal(got, map[string]int{"b": 1, "c": 3}) {
		t.Fatalf("after kill HeldSlots = %v", got)
	}
}

func TestQueue_PriorityThenFCFS(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sub := func(req string, prio int) uint64 {
		return h.ok(CmdSubmitJob, SubmitJob{RequestID: req, Owner: "u", Spec: JobSpec{Cmd: []string{"x"}, NP: 4, Priority: prio}}).JobID
	}
	a := sub("a", 0)
	b := sub("b", 5)
	c := sub("c", 0)
	d := sub("d", 5)
	e := sub("e", -1)
	f := sub("f", 0)
	// a is placed and fails: it goes back in line at its original place, ahead of c.
	h.launch(a, 1, "n1", "n2")
	h.ok(CmdFailAttempt, FailAttempt{ID: a, Attempt: 1, Reason: "node died", Retry: true})
	h.launch(f, 1, "n1", "n2") // not queued any more
	var got []uint64
	for _, j := range Queue(h.f.State()) {
		got = append(got, j.ID)
	}
	if want := []uint64{b, d, a, c, e}; !slices.Equal(got, want) {
		t.Fatalf("Queue = %v, want %v", got, want)
	}
}

func TestListJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i, owner := range []string{"alice", "bob", "alice", "alice", "bob"} {
		h.ok(CmdSubmitJob, SubmitJob{RequestID: fmt.Sprint("r", i), Owner: owner, Spec: JobSpec{Cmd: []string{"x"}, NP: 1}})
	}
	h.ok(CmdKillJob, KillJob{ID: 3, User: "alice"})
	s := h.f.State()
	ids := func(js []*Job) (out []uint64) {
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	cases := []struct {
		q    JobQuery
		want []uint64
		more bool
	}{
		{JobQuery{}, []uint64{1, 2, 3, 4, 5}, false},
		{JobQuery{Limit: 2}, []uint64{1, 2}, true},
		{JobQuery{Limit: 2, After: 2}, []uint64{3, 4}, true},
		{JobQuery{Limit: 2, After: 4}, []uint64{5}, false},
		{JobQuery{Owner: "alice"}, []uint64{1, 3, 4}, false},
		{JobQuery{Owner: "alice", States: []JobState{StateQueued}}, []uint64{1, 4}, false},
		{JobQuery{States: []JobState{StateKilled, StateDone}}, []uint64{3}, false},
		{JobQuery{Owner: "carol"}, nil, false},
	}
	for _, c := range cases {
		page, more := ListJobs(s, c.q)
		if !slices.Equal(ids(page), c.want) || more != c.more {
			t.Errorf("ListJobs(%+v) = %v more=%v, want %v more=%v", c.q, ids(page), more, c.want, c.more)
		}
	}
	page, _ := ListJobs(s, JobQuery{Limit: 1})
	page[0].Spec.Cmd[0] = "changed"
	if s.Jobs[1].Spec.Cmd[0] != "x" {
		t.Fatal("ListJobs returned the state's own job, not a copy")
	}
}
