package events

import (
	"fmt"
	"strconv"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// JobMark is what the diff remembers of a job: enough to tell each
// milestone, and to notice any other change a reader would see.
type JobMark struct {
	State      raftfsm.JobState
	Attempt    int
	Held       bool
	WaitReason string
	Reason     string
	Attempts   []AttemptMark
}

// AttemptMark is what the diff remembers of an attempt.
type AttemptMark struct {
	State   raftfsm.JobState
	Started bool
	Iter    int64
	Steps   int
}

// MarkJob is j's mark.
func MarkJob(j *raftfsm.Job) JobMark {
	m := JobMark{State: j.State, Attempt: j.Attempt, Held: j.Held, WaitReason: j.WaitReason, Reason: j.Reason,
		Attempts: make([]AttemptMark, len(j.Attempts))}
	for i, a := range j.Attempts {
		m.Attempts[i] = AttemptMark{State: a.State, Started: !a.StartedAt.IsZero(), Steps: len(a.Steps)}
		if a.Progress != nil {
			m.Attempts[i].Iter = a.Progress.Iter
		}
	}
	return m
}

// Settled says whether j is an ended job that m already describes: the
// bulk of a long history, skipped without building a mark (an ended job
// changes only when it is purged, or when it is requeued or held).
func Settled(m JobMark, j *raftfsm.Job) bool {
	return m.State.Terminal() && m.State == j.State && m.Attempt == j.Attempt && m.Held == j.Held && len(m.Attempts) == len(j.Attempts)
}

// Change is one event a diff found, without its index or payload.
type Change struct {
	Topic, Type string
	// Attempt is the attempt's number for an attempt event.
	Attempt int
}

// JobKey is the key of a job's events; AttemptKey of an attempt's.
func JobKey(id uint64) string { return strconv.FormatUint(id, 10) }

// AttemptKey is JOB/ATTEMPT.
func AttemptKey(id uint64, n int) string { return fmt.Sprintf("%d/%d", id, n) }

// DiffJob is what happened to a job between two marks, in the order it
// happened; prev nil is a job not seen before, cur nil one that is gone
// (purged). Attempt events come before the job event they cause: a job is
// placed when its attempt is, and ends when its last attempt does.
func DiffJob(prev, cur *JobMark) []Change {
	switch {
	case cur == nil && prev == nil:
		return nil
	case cur == nil:
		return []Change{{Topic: TopicJob, Type: "purged"}}
	}
	var out []Change
	job := func(typ string) { out = append(out, Change{Topic: TopicJob, Type: typ}) }
	before := JobMark{State: raftfsm.StateQueued}
	if prev == nil {
		job("submitted")
	} else {
		before = *prev
	}
	// The attempts, each from where it was.
	for i, a := range cur.Attempts {
		was, seen := AttemptMark{State: raftfsm.StateLaunching}, i < len(before.Attempts)
		if seen {
			was = before.Attempts[i]
		}
		n := i + 1
		att := func(typ string) { out = append(out, Change{Topic: TopicAttempt, Type: typ, Attempt: n}) }
		if !seen {
			att("placed")
		}
		if a.Started && !was.Started {
			att("started")
		}
		if a.Iter != was.Iter {
			att("progress")
		}
		if a.Steps != was.Steps {
			att("step")
		}
		if a.State.Terminal() && (!seen || !was.State.Terminal()) {
			att("ended")
		}
	}
	// The job's milestones.
	n0 := len(out)
	cura, wasa := current(cur), current(&before)
	newAttempt := cur.Attempt > before.Attempt
	if newAttempt {
		job("placed")
	}
	if cura != nil && cura.Started && (newAttempt || wasa == nil || !wasa.Started) {
		job("started")
	}
	if cur.State == raftfsm.StateQueued && before.State != raftfsm.StateQueued {
		job("requeued")
	}
	if cur.State.Terminal() && !before.State.Terminal() {
		if cur.State == raftfsm.StateKilled {
			job("cancelled")
		} else {
			job("ended")
		}
	}
	if cur.Held != before.Held {
		if cur.Held {
			job("held")
		} else {
			job("released")
		}
	}
	// Any other change a reader of the job would see (a wait reason, a
	// state without a milestone); an attempt's progress is the attempt's.
	if prev != nil && len(out) == n0 && !sameJob(prev, cur) {
		job("updated")
	}
	return out
}

func current(m *JobMark) *AttemptMark {
	if m.Attempt < 1 || m.Attempt > len(m.Attempts) {
		return nil
	}
	return &m.Attempts[m.Attempt-1]
}

// sameJob compares the job's own fields, not its attempts'.
func sameJob(a, b *JobMark) bool {
	return a.State == b.State && a.Attempt == b.Attempt && a.Held == b.Held && a.WaitReason == b.WaitReason &&
		a.Reason == b.Reason && len(a.Attempts) == len(b.Attempts)
}
