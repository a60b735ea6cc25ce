package raftfsm

import (
	"fmt"
	"strings"
	"unicode"
)

// Dependency kinds (--dependency), Slurm's names and meaning.
const (
	// DependAfterOK: start once every listed job is done (exit 0).
	DependAfterOK = "afterok"
	// DependAfterNotOK: start once every listed job failed or was killed.
	DependAfterNotOK = "afternotok"
	// DependAfterAny: start once every listed job ended, however.
	DependAfterAny = "afterany"
	// DependSingleton: start once no earlier job of the same owner and name is unfinished.
	DependSingleton = "singleton"
)

// DependTypes lists the dependency kinds.
var DependTypes = []string{DependAfterOK, DependAfterNotOK, DependAfterAny, DependSingleton}

// Dependency is one condition of --dependency. IDs name jobs, or arrays (an array's ID stands
// for all its tasks); singleton has none.
type Dependency struct {
	Type string   `json:"type"`
	IDs  []uint64 `json:"ids,omitempty"`
}

// Bounds on names and dependencies.
const (
	MaxNameLen    = 256
	MaxDependIDs  = 256
	MaxDependList = 16
)

// validateName refuses a job name that could not be shown on one line or used in a file name
// (%x in --output).
func validateName(name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: spec.name is %d bytes, at most %d", ErrInvalid, len(name), MaxNameLen)
	}
	if strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || r == '/' }) {
		return fmt.Errorf("%w: spec.name %q holds a control character or a slash", ErrInvalid, name)
	}
	return nil
}

// validateDepend checks the form of a job's dependencies (not whether the jobs exist).
func validateDepend(ds []Dependency) error {
	if len(ds) > MaxDependList {
		return fmt.Errorf("%w: spec.depend has %d conditions, at most %d", ErrInvalid, len(ds), MaxDependList)
	}
	for i, d := range ds {
		if !contains(DependTypes, d.Type) {
			return fmt.Errorf("%w: spec.depend[%d].type = %q, want one of %s", ErrInvalid, i, d.Type, strings.Join(DependTypes, ", "))
		}
		if d.Type == DependSingleton {
			if len(d.IDs) > 0 {
				return fmt.Errorf("%w: spec.depend[%d]: singleton takes no job IDs", ErrInvalid, i)
			}
			continue
		}
		if len(d.IDs) == 0 || len(d.IDs) > MaxDependIDs {
			return fmt.Errorf("%w: spec.depend[%d]: %s needs 1 to %d job IDs", ErrInvalid, i, d.Type, MaxDependIDs)
		}
		for _, id := range d.IDs {
			if id == 0 {
				return fmt.Errorf("%w: spec.depend[%d]: job ID 0 does not exist", ErrInvalid, i)
			}
		}
	}
	return nil
}

// checkDependTargets refuses, at submit, dependencies on jobs the state does not hold. The
// job being submitted gets IDs from NextJobID on, so naming one of those would make the job
// (or a task of its own array) wait for itself: a cycle. Jobs only ever depend on earlier
// jobs, so no longer cycle can form.
func (s *State) checkDependTargets(ds []Dependency) error {
	for _, d := range ds {
		for _, id := range d.IDs {
			if id >= s.NextJobID {
				return fmt.Errorf("%w: dependency %s:%d is a cycle: job %d is this job or one submitted after it", ErrInvalid, d.Type, id, id)
			}
			if _, ok := s.Jobs[id]; !ok {
				return fmt.Errorf("%w: dependency %s:%d: no job %d (unknown, or finished and purged)", ErrInvalid, d.Type, id, id)
			}
		}
	}
	return nil
}

// DependOutcome is what a dependency condition says about a queued job now.
type DependOutcome int

// The outcomes of a dependency.
const (
	DependMet   DependOutcome = iota // the condition holds
	DependWait                       // not yet
	DependNever                      // it never can
)

// CheckDepend evaluates j's dependencies against the state: met when every condition holds;
// otherwise the first condition that never can, or else the first that waits, with the reason
// in Slurm's words (DependencyNeverSatisfied, Dependency). tasks maps an array's ID to its tasks
// (ArrayTasks), so that a round evaluates many jobs without scanning the state for each.
func CheckDepend(s *State, j *Job, tasks map[uint64][]*Job) (DependOutcome, string) {
	var wait string
	for _, d := range j.Spec.Depend {
		if d.Type == DependSingleton {
			if w := singletonBlocker(s, j); w != nil && wait == "" {
				wait = fmt.Sprintf("Dependency: singleton: job %d of %s named %q runs first", w.ID, j.Owner, j.Spec.Name)
			}
			continue
		}
		for _, id := range d.IDs {
			targets := []*Job{s.Jobs[id]}
			if t := tasks[id]; len(t) > 0 {
				targets = t
			} else if targets[0] == nil {
				return DependNever, fmt.Sprintf("DependencyNeverSatisfied: %s:%d: job %d is gone", d.Type, id, id)
			}
			for _, t := range targets {
				switch o := dependOn(d.Type, t.State); o {
				case DependNever:
					return DependNever, fmt.Sprintf("DependencyNeverSatisfied: %s:%d: job %d %s", d.Type, id, t.ID, t.State)
				case DependWait:
					if wait == "" {
						wait = fmt.Sprintf("Dependency: %s:%d: job %d is %s", d.Type, id, t.ID, t.State)
					}
				}
			}
		}
	}
	if wait != "" {
		return DependWait, wait
	}
	return DependMet, ""
}

// dependOn is one condition on one job in state st.
func dependOn(typ string, st JobState) DependOutcome {
	if !st.finished() {
		return DependWait
	}
	switch typ {
	case DependAfterOK:
		if st != StateDone {
			return DependNever
		}
	case DependAfterNotOK:
		if st == StateDone {
			return DependNever
		}
	}
	return DependMet
}

// singletonBlocker returns an unfinished earlier job of j's owner with j's name, or nil.
func singletonBlocker(s *State, j *Job) *Job {
	var first *Job
	for id, o := range s.Jobs {
		if id < j.ID && o.Owner == j.Owner && o.Spec.Name == j.Spec.Name && !o.State.finished() {
			if first == nil || id < first.ID {
				first = o
			}
		}
	}
	return first
}

// ArrayTasks maps each array's ID to its tasks, by job ID.
func ArrayTasks(s *State) map[uint64][]*Job {
	out := map[uint64][]*Job{}
	for _, id := range s.SortedJobIDs() {
		if j := s.Jobs[id]; j.InArray() {
			out[j.ArrayJobID] = append(out[j.ArrayJobID], j)
		}
	}
	return out
}
