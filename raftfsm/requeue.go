package raftfsm

import (
	"fmt"
	"time"
)

// RequeueJob (requeue_job) puts a job back in the queue, as Slurm's
// scontrol requeue does: a launching or running job's attempt ends
// (killed, "requeued by USER", so its nodes stop its processes) and a
// finished job is queued again, its attempts kept; either way the next
// placement starts a new attempt. With Hold it is also held
// (requeuehold). Its owner or root only; one job, not an array.
type RequeueJob struct {
	ID   uint64 `json:"id"`
	User string `json:"user"`
	Hold bool   `json:"hold,omitempty"`
}

func (s *State) requeue(at time.Time, b *RequeueJob) (Result, error) {
	if err := nonEmpty("user", b.User); err != nil {
		return Result{JobID: b.ID}, err
	}
	j, err := s.job(b.ID)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	switch {
	case b.User != j.Owner && b.User != RootUser:
		return res, fmt.Errorf("%w: job %d belongs to %q, not %q", ErrNotOwner, j.ID, j.Owner, b.User)
	case j.Spec.Elastic != nil:
		return res, fmt.Errorf("%w: job %d is elastic: it resizes and restarts by itself", ErrInvalid, j.ID)
	case j.State == StateQueued:
		if j.Held == b.Hold || !b.Hold {
			res.Noop = true
			return res, nil
		}
	}
	reason := "requeued by " + b.User
	n := j.clone()
	if cur := n.Current(); cur != nil && !cur.Ended() {
		cur.State, cur.Reason, cur.EndedAt = StateKilled, reason, at
	}
	n.State, n.Reason = StateQueued, reason
	n.StartedAt, n.EndedAt, n.ExitCode = time.Time{}, time.Time{}, nil
	n.WaitReason, n.WaitSince = "", time.Time{}
	n.Held = n.Held || b.Hold
	s.setJob(n)
	return res, nil
}
