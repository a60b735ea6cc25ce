package raftfsm

import (
	"fmt"
	"time"
)

// HoldJob (hold_job) holds a queued job (Hold) or releases it: the leader leaves a held job in
// the queue without placing it. Only the owner or root may. With Array, ID names an array and
// the command acts on all its queued tasks. Holding what is held (or releasing what is not) is
// a no-op.
type HoldJob struct {
	ID    uint64 `json:"id"`
	User  string `json:"user"`
	Hold  bool   `json:"hold"`
	Array bool   `json:"array,omitempty"`
}

func (s *State) hold(_ time.Time, b *HoldJob) (Result, error) {
	if err := nonEmpty("user", b.User); err != nil {
		return Result{JobID: b.ID}, err
	}
	jobs, err := s.targets(b.ID, b.Array)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: b.ID, Noop: true}
	var change []*Job
	for _, j := range jobs {
		if b.User != j.Owner && b.User != RootUser {
			return Result{JobID: b.ID}, fmt.Errorf("%w: job %d belongs to %q, not %q", ErrNotOwner, j.ID, j.Owner, b.User)
		}
		if j.Held == b.Hold {
			continue
		}
		if j.State != StateQueued {
			if b.Array {
				continue // the tasks that started already are out of reach, as in Slurm
			}
			return Result{JobID: b.ID}, fmt.Errorf("%w: job %d is %s, only a queued job can be held or released", ErrWrongState, j.ID, j.State)
		}
		change = append(change, j)
	}
	for _, j := range change {
		n := j.clone()
		n.Held = b.Hold
		s.setJob(n)
		res.JobIDs = append(res.JobIDs, n.ID)
		res.Noop = false
	}
	return res, nil
}
