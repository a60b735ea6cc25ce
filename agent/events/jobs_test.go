package events

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// job builds a mark: attempts as "STATE" or "STATE+" (started).
func job(state raftfsm.JobState, attempts ...string) *JobMark {
	m := &JobMark{State: state, Attempt: len(attempts)}
	for _, a := range attempts {
		st, started := strings.CutSuffix(a, "+")
		m.Attempts = append(m.Attempts, AttemptMark{State: raftfsm.JobState(st), Started: started})
	}
	return m
}

func names(cs []Change) []string {
	var out []string
	for _, c := range cs {
		s := c.Topic + ":" + c.Type
		if c.Attempt > 0 {
			s += "/" + string(rune('0'+c.Attempt))
		}
		out = append(out, s)
	}
	return out
}

func TestDiffJob(t *testing.T) {
	t.Parallel()
	waiting := job(raftfsm.StateQueued)
	waiting.WaitReason = "no free slots"
	held := job(raftfsm.StateQueued)
	held.Held = true
	for _, tc := range []struct {
		name      string
		prev, cur *JobMark
		want      []string
	}{
		{"submitted", nil, job(raftfsm.StateQueued), []string{"job:submitted"}},
		{"unchanged", job(raftfsm.StateQueued), job(raftfsm.StateQueued), nil},
		{"placed", job(raftfsm.StateQueued), job(raftfsm.StateLaunching, "launching"),
			[]string{"attempt:placed/1", "job:placed"}},
		{"started", job(raftfsm.StateLaunching, "launching"), job(raftfsm.StateRunning, "running+"),
			[]string{"attempt:started/1", "job:started"}},
		{"ended", job(raftfsm.StateRunning, "running+"), job(raftfsm.StateDone, "done+"),
			[]string{"attempt:ended/1", "job:ended"}},
		// Seen first when it was already over: every milestone, once, in order.
		{"whole story at once", nil, job(raftfsm.StateDone, "done+"),
			[]string{"job:submitted", "attempt:placed/1", "attempt:started/1", "attempt:ended/1", "job:placed", "job:started", "job:ended"}},
		{"killed while queued", job(raftfsm.StateQueued), job(raftfsm.StateKilled), []string{"job:cancelled"}},
		{"killed while running", job(raftfsm.StateRunning, "running+"), job(raftfsm.StateKilled, "killed+"),
			[]string{"attempt:ended/1", "job:cancelled"}},
		{"requeued", job(raftfsm.StateRunning, "running+"), job(raftfsm.StateQueued, "failed+"),
			[]string{"attempt:ended/1", "job:requeued"}},
		{"second attempt", job(raftfsm.StateQueued, "failed+"), job(raftfsm.StateRunning, "failed+", "running+"),
			[]string{"attempt:placed/2", "attempt:started/2", "job:placed", "job:started"}},
		{"wait reason", job(raftfsm.StateQueued), waiting, []string{"job:updated"}},
		{"held", job(raftfsm.StateQueued), held, []string{"job:held"}},
		{"released", held, job(raftfsm.StateQueued), []string{"job:released"}},
		{"purged", job(raftfsm.StateDone, "done+"), nil, []string{"job:purged"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(DiffJob(tc.prev, tc.cur)); !slices.Equal(got, tc.want) {
				t.Errorf("DiffJob = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDiffJobProgressIsTheAttempts(t *testing.T) {
	t.Parallel()
	a, b := job(raftfsm.StateRunning, "running+"), job(raftfsm.StateRunning, "running+")
	b.Attempts[0].Iter = 40
	if got := names(DiffJob(a, b)); !slices.Equal(got, []string{"attempt:progress/1"}) {
		t.Fatalf("progress = %v, want the attempt's progress alone", got)
	}
}

func TestMarkJob(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	j := &raftfsm.Job{ID: 4, State: raftfsm.StateRunning, Attempt: 1, WaitReason: "w", Attempts: []raftfsm.Attempt{
		{N: 1, State: raftfsm.StateRunning, StartedAt: now, Progress: &raftfsm.Progress{Iter: 9}}}}
	m := MarkJob(j)
	if m.State != raftfsm.StateRunning || m.Attempt != 1 || m.WaitReason != "w" || len(m.Attempts) != 1 ||
		!m.Attempts[0].Started || m.Attempts[0].Iter != 9 {
		t.Fatalf("MarkJob = %+v", m)
	}
	if k := AttemptKey(4, 2); k != "4/2" {
		t.Fatalf("AttemptKey = %q", k)
	}
}

func TestSettled(t *testing.T) {
	t.Parallel()
	done := &raftfsm.Job{State: raftfsm.StateDone, Attempt: 1, Attempts: []raftfsm.Attempt{{N: 1, State: raftfsm.StateDone}}}
	m := MarkJob(done)
	if !Settled(m, done) {
		t.Fatal("an ended job its mark describes is not settled")
	}
	requeued := done.Clone()
	requeued.State = raftfsm.StateQueued
	running := &raftfsm.Job{State: raftfsm.StateRunning, Attempt: 1, Attempts: []raftfsm.Attempt{{N: 1, State: raftfsm.StateRunning}}}
	for name, j := range map[string]*raftfsm.Job{"requeued": requeued, "running": running} {
		if Settled(m, j) || Settled(MarkJob(running), j) {
			t.Errorf("%s: settled, so its change would go untold", name)
		}
	}
}
