package raftfsm

import (
	"fmt"
	"time"
)

// UpdateJob (update_job) changes the time limit of a queued job (Slurm's
// scontrol update TimeLimit=), or with Array of every queued task of an
// array. Its owner may lower the limit; raising it, or lifting it (0),
// takes root, as in Slurm, where a user may only shorten a limit an
// administrator's policy allowed. An attempt already placed keeps the
// limit it started with: the job must be queued.
type UpdateJob struct {
	ID      uint64        `json:"id"`
	User    string        `json:"user"`
	Array   bool          `json:"array,omitempty"`
	Timeout time.Duration `json:"timeout"`
}

// maxTimeLimit bounds a changed limit as sbatch's -t is bounded.
const maxTimeLimit = 366 * 24 * time.Hour

func (s *State) updateJob(_ time.Time, b *UpdateJob) (Result, error) {
	if err := nonEmpty("user", b.User); err != nil {
		return Result{JobID: b.ID}, err
	}
	if b.Timeout < 0 || b.Timeout > maxTimeLimit {
		return Result{JobID: b.ID}, fmt.Errorf("%w: timeout %s, want 0 (none) to %s", ErrInvalid, b.Timeout, maxTimeLimit)
	}
	jobs, err := s.targets(b.ID, b.Array)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	var change []*Job
	for _, j := range jobs {
		if b.User != j.Owner && b.User != RootUser {
			return Result{JobID: b.ID}, fmt.Errorf("%w: job %d belongs to %q, not %q", ErrNotOwner, j.ID, j.Owner, b.User)
		}
		if j.State != StateQueued {
			if b.Array {
				continue // tasks that started keep their limit
			}
			return Result{JobID: b.ID}, fmt.Errorf("%w: job %d is %s, only a queued job's time limit can change", ErrWrongState, j.ID, j.State)
		}
		if b.User != RootUser && raises(j.Spec.Timeout, b.Timeout) {
			return Result{JobID: b.ID}, fmt.Errorf("%w: job %d's time limit is %s; only root may raise it to %s", ErrNotOwner, j.ID, limitString(j.Spec.Timeout), limitString(b.Timeout))
		}
		change = append(change, j)
	}
	res := Result{JobID: b.ID, Noop: true}
	for _, j := range change {
		if j.Spec.Timeout == b.Timeout {
			continue
		}
		n := j.clone()
		n.Spec.Timeout = b.Timeout
		s.setJob(n)
		res.JobIDs = append(res.JobIDs, n.ID)
		res.Noop = false
	}
	return res, nil
}

// raises says whether limit next is longer than old (0 is no limit).
func raises(old, next time.Duration) bool {
	switch {
	case old == 0:
		return false
	case next == 0:
		return true
	}
	return next > old
}

func limitString(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}
