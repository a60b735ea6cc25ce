package raftfsm

import (
	"fmt"
	"slices"
)

// ArraySpec is a job array (--array): one job per task index, at most Limit of them holding
// slots at once (0 = no limit).
type ArraySpec struct {
	Tasks []int `json:"tasks"`
	Limit int   `json:"limit,omitempty"`
}

// Bounds on arrays (Slurm's MaxArraySize is 1001 by default; a lab's sweeps fit in this one).
const (
	MaxArrayTasks  = 10000
	MaxArrayTaskID = 1 << 20
)

// validateArray checks an array's form: tasks distinct, increasing, within bounds.
func validateArray(a *ArraySpec) error {
	if a == nil {
		return nil
	}
	if len(a.Tasks) == 0 || len(a.Tasks) > MaxArrayTasks {
		return fmt.Errorf("%w: spec.array has %d tasks, want 1 to %d", ErrInvalid, len(a.Tasks), MaxArrayTasks)
	}
	for i, t := range a.Tasks {
		if t < 0 || t > MaxArrayTaskID {
			return fmt.Errorf("%w: spec.array task %d outside [0,%d]", ErrInvalid, t, MaxArrayTaskID)
		}
		if i > 0 && t <= a.Tasks[i-1] {
			return fmt.Errorf("%w: spec.array tasks must increase without repeats (%d after %d)", ErrInvalid, t, a.Tasks[i-1])
		}
	}
	if a.Limit < 0 {
		return fmt.Errorf("%w: spec.array.limit = %d, must be >= 0 (0 = no limit)", ErrInvalid, a.Limit)
	}
	return nil
}

// taskCount is the number of jobs a submit of sp creates.
func (sp *JobSpec) taskCount() int {
	if sp.Array == nil {
		return 1
	}
	return len(sp.Array.Tasks)
}

// arrayRequestID is the request ID of task i > 0 of an array submitted with rid; the first task
// keeps rid itself, so a retried submit finds the array by it.
func arrayRequestID(rid string, task int) string { return fmt.Sprintf("%s[%d]", rid, task) }

// LiveTasks counts, per array, the tasks that hold slots (launching or running).
func LiveTasks(s *State) map[uint64]int {
	out := map[uint64]int{}
	for _, j := range s.Jobs {
		if j.InArray() && j.State.Live() {
			out[j.ArrayJobID]++
		}
	}
	return out
}

// targets returns the jobs a command on id acts on: the job, or with array every task of the
// array id names, by ID. It refuses array for a job that is not an array's ID.
func (s *State) targets(id uint64, array bool) ([]*Job, error) {
	j, err := s.job(id)
	if err != nil {
		return nil, err
	}
	if !array {
		return []*Job{j}, nil
	}
	if j.ArrayJobID != j.ID {
		return nil, fmt.Errorf("%w: job %d is not an array's ID", ErrInvalid, id)
	}
	var out []*Job
	for _, o := range s.Jobs {
		if o.ArrayJobID == id {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b *Job) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

func compareIDs(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
