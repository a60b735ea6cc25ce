package raftfsm

import (
	"math"
	"testing"
	"time"
)

// ran records a finished attempt of owner on procs processes from start to end.
func ran(s *State, id uint64, owner string, procs int, start, end time.Time) {
	s.Jobs[id] = &Job{ID: id, Owner: owner, State: StateDone, Seq: id, Attempt: 1, Attempts: []Attempt{{
		N: 1, Hosts: []Host{{Node: "n1", NP: procs}}, State: StateDone, StartedAt: start, EndedAt: end}}}
}

func queued(s *State, id uint64, owner string, prio int) {
	s.Jobs[id] = &Job{ID: id, Owner: owner, State: StateQueued, Seq: id, Spec: JobSpec{Priority: prio}}
}

func TestUsage_DecaysWithHalfLife(t *testing.T) {
	t.Parallel()
	now := t0.Add(10 * time.Hour)
	h := time.Hour
	for _, tc := range []struct {
		name       string
		procs      int
		start, end time.Time
		want       float64
	}{
		// 4 cores for 1 s just now: 4 core-seconds, barely decayed.
		{"just now", 4, now.Add(-time.Second), now, 4 * 3600 / math.Ln2 * (1 - math.Exp2(-1.0/3600))},
		// 100 core-seconds one half-life ago count about half.
		{"one half-life ago", 1, now.Add(-h - 100*time.Second), now.Add(-h), 3600 / math.Ln2 * (math.Exp2(-1) - math.Exp2(-(3700.0 / 3600)))},
		// Running: counted up to now.
		{"running", 2, now.Add(-10 * time.Second), time.Time{}, 2 * 3600 / math.Ln2 * (1 - math.Exp2(-10.0/3600))},
		{"ten half-lives ago", 8, t0, t0.Add(time.Minute), 8 * 3600 / math.Ln2 * (math.Exp2(-(10*3600.0-60)/3600) - math.Exp2(-10))},
	} {
		s := NewState()
		ran(s, 1, "alice", tc.procs, tc.start, tc.end)
		if tc.end.IsZero() {
			s.Jobs[1].State, s.Jobs[1].Attempts[0].State, s.Jobs[1].Attempts[0].EndedAt = StateRunning, StateRunning, time.Time{}
		}
		got := RecentUsage(s, now, h)["alice"]
		if math.Abs(got-tc.want) > 1e-6*max(1, tc.want) {
			t.Errorf("%s: usage %v, want %v", tc.name, got, tc.want)
		}
	}
	s := NewState()
	ran(s, 1, "alice", 1, now.Add(-h-100*time.Second), now.Add(-h))
	ran(s, 2, "bob", 1, now.Add(-100*time.Second), now)
	u := RecentUsage(s, now, h)
	if r := u["alice"] / u["bob"]; math.Abs(r-0.5) > 0.01 {
		t.Errorf("usage one half-life old / fresh = %v, want 0.5", r)
	}
}

func TestFairQueue(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	s := NewState()
	ran(s, 1, "alice", 4, now.Add(-10*time.Minute), now.Add(-5*time.Minute)) // alice used the cluster
	ran(s, 2, "carol", 1, now.Add(-10*time.Minute), now.Add(-9*time.Minute)) // carol a little
	queued(s, 3, "alice", 0)
	queued(s, 4, "alice", 0)
	queued(s, 5, "bob", 0)
	queued(s, 6, "carol", 0)
	queued(s, 7, "alice", 1) // a higher priority still goes first
	queued(s, 8, "bob", -1)  // a lower one last
	var got []uint64
	for _, j := range FairQueue(s, now, time.Hour) {
		got = append(got, j.ID)
	}
	want := []uint64{7, 5, 6, 3, 4, 8}
	if len(got) != len(want) {
		t.Fatalf("queue %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("queue %v, want %v (bob never ran, carol ran little, alice much)", got, want)
		}
	}
	share := FairShare(s, RecentUsage(s, now, time.Hour))
	if share["bob"] != 1 || !(share["carol"] < 1 && share["carol"] > share["alice"]) {
		t.Errorf("shares %v", share)
	}
	if p := EffectivePriority(s.Jobs[7], share); p <= 1 || p > 2 {
		t.Errorf("effective priority of a priority-1 job = %v, want in (1,2]", p)
	}
	// Nobody used anything: first come, first served within a priority.
	empty := NewState()
	queued(empty, 1, "alice", 0)
	queued(empty, 2, "bob", 0)
	if q := FairQueue(empty, now, time.Hour); q[0].ID != 1 || q[1].ID != 2 {
		t.Errorf("without usage the queue is %d, %d; want 1, 2", q[0].ID, q[1].ID)
	}
}
