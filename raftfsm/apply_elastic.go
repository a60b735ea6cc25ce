package raftfsm

import (
	"fmt"
	"math"
	"time"
)

func (s *State) reportProgress(at time.Time, b *ReportProgress) (Result, error) {
	if b.Iter < 0 {
		return Result{JobID: b.ID}, fmt.Errorf("%w: iter = %d, must be >= 0", ErrInvalid, b.Iter)
	}
	if c := b.Comm; c != nil && (math.IsNaN(*c) || *c < 0 || *c > 1) {
		return Result{JobID: b.ID}, fmt.Errorf("%w: comm = %v, must be in [0,1]", ErrInvalid, *c)
	}
	j, a, res, err := s.current(b.ID, b.Attempt)
	if err != nil {
		return res, err
	}
	if a.Ended() {
		return res, errEnded(j, a)
	}
	if a.State != StateRunning {
		return res, fmt.Errorf("%w: job %d attempt %d is %s, not running", ErrWrongState, j.ID, a.N, a.State)
	}
	if p := a.Progress; p != nil && b.Iter <= p.Iter {
		res.Noop = true
		return res, nil
	}
	n := j.clone()
	cur := n.Current()
	if cur.Progress == nil {
		cur.Progress = &Progress{FirstIter: b.Iter, FirstAt: at}
		// The first report after a resize closes the measurement of the restart's cost.
		if e := n.Elastic; e != nil && e.ResizeAttempt == cur.N-1 && e.ResizeAttempt > 0 && !e.ResizeAt.IsZero() && at.After(e.ResizeAt) {
			e.RestartCosts = appendCapped(e.RestartCosts, at.Sub(e.ResizeAt), MaxRestartCosts)
		}
	}
	p := cur.Progress
	p.Iter, p.At = b.Iter, at
	p.Reports++
	if b.Comm != nil {
		p.Comm = *b.Comm
	}
	s.setJob(n)
	return res, nil
}

func (s *State) resize(at time.Time, b *ResizeJob) (Result, error) {
	if err := nonEmpty("reason", b.Reason); err != nil {
		return Result{JobID: b.ID}, err
	}
	j, a, res, err := s.current(b.ID, b.Attempt)
	if err != nil {
		return res, err
	}
	e, sp := j.Elastic, j.Spec.Elastic
	if e == nil || sp == nil {
		return res, fmt.Errorf("%w: job %d is not elastic", ErrWrongState, j.ID)
	}
	if a.Ended() {
		return res, errEnded(j, a)
	}
	if e.ResizeAttempt == a.N {
		if e.TargetNP == b.TargetNP {
			res.Noop = true
			return res, nil
		}
		return res, fmt.Errorf("%w: job %d attempt %d was already asked to resize to %d", ErrWrongState, j.ID, a.N, e.TargetNP)
	}
	if a.State != StateRunning {
		return res, fmt.Errorf("%w: job %d attempt %d is %s, not running", ErrWrongState, j.ID, a.N, a.State)
	}
	if b.TargetNP < sp.MinNP || b.TargetNP > sp.MaxNP || b.TargetNP%j.Spec.Unit() != 0 {
		return res, fmt.Errorf("%w: target_np = %d, must be a multiple of %d within %d:%d", ErrInvalid, b.TargetNP, j.Spec.Unit(), sp.MinNP, sp.MaxNP)
	}
	if b.TargetNP == a.NP() {
		return res, fmt.Errorf("%w: job %d attempt %d already runs %d processes", ErrInvalid, j.ID, a.N, b.TargetNP)
	}
	if err := checkLen("reason", b.Reason); err != nil {
		return res, err
	}
	n := j.clone()
	ne := n.Elastic
	ne.TargetNP, ne.ResizeAttempt, ne.ResizeAt = b.TargetNP, a.N, at
	ne.History = appendCapped(ne.History, Resize{At: at, Attempt: a.N, FromNP: a.NP(), ToNP: b.TargetNP, Reason: b.Reason}, MaxHistory)
	s.setJob(n)
	return res, nil
}

// checkpointedCopy returns a copy of running elastic job j whose current attempt exited 75: the
// attempt is checkpointed and the job queued again, without counting it against MaxAttempts.
func checkpointedCopy(j *Job, at time.Time) *Job {
	n := j.clone()
	cur := n.Current()
	code := ExitCheckpointed
	why := "checkpointed (exit 75)"
	if p := cur.Progress; p != nil {
		why = fmt.Sprintf("checkpointed at iteration %d (exit 75)", p.Iter)
	}
	cur.State, cur.Reason, cur.EndedAt, cur.ExitCode = StateCheckpointed, why, at, &code
	n.Elastic.Checkpoints++
	n.State, n.StartedAt = StateQueued, time.Time{}
	n.Reason = fmt.Sprintf("attempt %d %s; relaunching on %d processes", cur.N, why, n.Elastic.TargetNP)
	return n
}

// appendCapped appends v and drops the oldest entries beyond limit.
func appendCapped[T any](s []T, v T, limit int) []T {
	s = append(s, v)
	if len(s) > limit {
		s = append([]T(nil), s[len(s)-limit:]...)
	}
	return s
}
