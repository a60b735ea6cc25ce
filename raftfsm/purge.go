package raftfsm

import (
	"fmt"
	"slices"
	"time"
)

// PurgeJobs (purge_jobs) forgets finished jobs: done, failed or killed ones among IDs leave the
// state, each leaving a compact HistoryRecord, and their request IDs stop deduplicating. Without it the replicated state, every snapshot
// and every `shoal jobs` grow with every job ever run. IDs that are unknown or not finished are
// skipped, so a re-proposal, or a job killed and purged by two leaders in turn, is harmless.
type PurgeJobs struct {
	IDs []uint64 `json:"ids"`
}

// MaxPurgeBatch bounds the IDs of one purge_jobs command so that one log entry stays small.
const MaxPurgeBatch = 512

// finished is true for the states a job never leaves (a checkpointed job waits for relaunch).
func (s JobState) finished() bool {
	return s == StateDone || s == StateFailed || s == StateKilled
}

func (s *State) purge(_ time.Time, b *PurgeJobs) (Result, error) {
	if len(b.IDs) == 0 || len(b.IDs) > MaxPurgeBatch {
		return Result{}, fmt.Errorf("%w: purge_jobs: %d ids, want 1 to %d", ErrInvalid, len(b.IDs), MaxPurgeBatch)
	}
	var gone []uint64
	var recs []HistoryRecord
	for _, id := range b.IDs {
		j, ok := s.Jobs[id]
		if !ok || !j.State.finished() {
			continue
		}
		s.deleteJob(id)
		if s.byRequest[j.RequestID] == id {
			delete(s.byRequest, j.RequestID)
		}
		gone = append(gone, id)
		recs = append(recs, Record(j))
	}
	slices.Sort(gone)
	if len(recs) > 0 {
		s.History = addHistory(s.History, recs) // the job leaves its record
	}
	return Result{JobIDs: gone, Noop: len(gone) == 0}, nil
}

// PurgeCandidates lists, oldest first and at most MaxPurgeBatch, the finished jobs that ended
// before now-retention: what the leader proposes to purge. A pure function of the state, so a
// new leader proposes the same.
func PurgeCandidates(s *State, now time.Time, retention time.Duration) []uint64 {
	cutoff := now.Add(-retention)
	needed := dependedOn(s)
	var out []uint64
	for _, id := range s.SortedJobIDs() {
		j := s.Jobs[id]
		if needed(j) {
			continue
		}
		if j.State.finished() && !j.EndedAt.IsZero() && j.EndedAt.Before(cutoff) {
			out = append(out, id)
			if len(out) == MaxPurgeBatch {
				break
			}
		}
	}
	return out
}

// dependedOn reports whether an unfinished job depends on j (on j itself, or on the array j is a
// task of): such a finished job stays, as its outcome decides the other's fate.
func dependedOn(s *State) func(j *Job) bool {
	needed := map[uint64]bool{}
	for _, j := range s.Jobs {
		if !j.State.finished() {
			for _, d := range j.Spec.Depend {
				for _, id := range d.IDs {
					needed[id] = true
				}
			}
		}
	}
	return func(j *Job) bool { return needed[j.ID] || (j.InArray() && needed[j.ArrayJobID]) }
}
