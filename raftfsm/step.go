package raftfsm

import (
	"fmt"
	"time"
)

// Job steps: each MPI launch inside a batch script (mpiexec,
// mpirun), as Slurm's JOBID.0, JOBID.1 are, recorded by the head node when
// the launch starts and when it ends (record_step).

// Bounds on the steps of one attempt: a script that launches in a loop
// keeps its first MaxSteps; a step's command keeps its first
// MaxStepArgs arguments.
const (
	MaxSteps    = 128
	MaxStepArgs = 16
)

// Step is one MPI launch of a batch attempt.
type Step struct {
	// N numbers the attempt's steps from 0, in the order they started.
	N   int      `json:"n"`
	Cmd []string `json:"cmd"`
	// Nodes are the nodes the step was given (the allocation's hostfile),
	// compressed as in SHOAL_NODELIST (n[0-3]).
	Nodes     string    `json:"nodes,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// ExitCode is the launcher's exit status; nil while it runs, or when
	// the step ended without one (its launcher's wrapper was killed).
	ExitCode *int `json:"exit_code,omitempty"`
}

// RecordStep (record_step) records the start of step Step of an attempt
// (End false: Cmd and Nodes) or its end (End true, ExitCode if known).
type RecordStep struct {
	ID       uint64   `json:"id"`
	Attempt  int      `json:"attempt"`
	Step     int      `json:"step"`
	Cmd      []string `json:"cmd,omitempty"`
	Nodes    string   `json:"nodes,omitempty"`
	End      bool     `json:"end,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
}

func (s *State) recordStep(at time.Time, b *RecordStep) (Result, error) {
	if len(b.Cmd) > MaxStepArgs {
		return Result{JobID: b.ID}, fmt.Errorf("%w: a step's command has at most %d arguments", ErrInvalid, MaxStepArgs)
	}
	for _, v := range append([]string{b.Nodes}, b.Cmd...) {
		if err := checkLen("step argument or nodes", v); err != nil {
			return Result{JobID: b.ID}, err
		}
	}
	j, err := s.job(b.ID)
	if err != nil {
		return Result{JobID: b.ID}, err
	}
	res := Result{JobID: j.ID, Attempt: j.Attempt}
	if b.Attempt < 1 || b.Attempt > len(j.Attempts) {
		return res, fmt.Errorf("%w: job %d has no attempt %d", ErrInvalid, j.ID, b.Attempt)
	}
	a := &j.Attempts[b.Attempt-1]
	switch {
	case !b.End && b.Step == len(a.Steps) && b.Step < MaxSteps:
		if len(b.Cmd) == 0 || b.ExitCode != nil {
			return res, fmt.Errorf("%w: a step's start gives its command and no exit code", ErrInvalid)
		}
		n := j.clone()
		na := &n.Attempts[b.Attempt-1]
		na.Steps = append(na.Steps, Step{N: b.Step, Cmd: cloneSlice(b.Cmd), Nodes: b.Nodes, StartedAt: at})
		s.setJob(n)
		return res, nil
	case !b.End && b.Step < len(a.Steps):
		res.Noop = true // a retried start
		return res, nil
	case b.End && b.Step >= 0 && b.Step < len(a.Steps):
		if !a.Steps[b.Step].EndedAt.IsZero() {
			res.Noop = true
			return res, nil
		}
		n := j.clone()
		st := &n.Attempts[b.Attempt-1].Steps[b.Step]
		st.EndedAt, st.ExitCode = at, clonePtr(b.ExitCode)
		s.setJob(n)
		return res, nil
	}
	return res, fmt.Errorf("%w: job %d attempt %d has %d steps (at most %d): no step %d to %s", ErrInvalid, j.ID, b.Attempt, len(a.Steps), MaxSteps, b.Step, map[bool]string{false: "start", true: "end"}[b.End])
}
