package raftfsm

import (
	"encoding/json"
	"fmt"
	"time"
)

// Limits bound what one user may hold in the replicated state, so that one user cannot grow every
// node's memory, raft log and API answers (150 queued jobs of 1 MiB each make every agent grow
// to over a gigabyte, since every agent holds the whole state). They live in raft like Settings: submit_job checks them against the
// state it is applied to, so the check is deterministic, every node agrees on it, and two submits
// through two different agents are ordered by the log and cannot both slip under a limit. A zero
// field is no limit; a fresh state has none until the leader writes its agent's flags (set_limits).
type Limits struct {
	// QueuedJobs bounds one owner's jobs in state queued. Default 100.
	QueuedJobs int `json:"queued_jobs,omitempty"`
	// Procs bounds the CPUs one owner's unfinished jobs (queued, launching, running) ask for:
	// processes times --cpus-per-rank, as a rank of N CPUs takes N cores; an elastic job counts
	// its maximum. Default 4096.
	Procs int `json:"procs,omitempty"`
	// SpecBytes bounds the size of one job's spec as JSON. Default 65536.
	SpecBytes int `json:"spec_bytes,omitempty"`
	// Argv bounds the entries of a job's command line. Default 1024.
	Argv int `json:"argv,omitempty"`
	// Env bounds the entries of a job's environment. Default 256.
	Env int `json:"env,omitempty"`
	// FinishedJobs bounds one owner's finished jobs (done, failed, killed) in the state: when
	// one more ends, or the owner submits, the oldest beyond it leave for the history, as the
	// retention's purge would take them (finished.go). Default 100.
	FinishedJobs int `json:"finished_jobs,omitempty"`
}

// DefaultLimits are the agent's defaults: far above what a person or a script of sweeps needs,
// far below what hurts the cluster.
func DefaultLimits() Limits {
	return Limits{QueuedJobs: 100, Procs: 4096, SpecBytes: 64 << 10, Argv: 1024, Env: 256, FinishedJobs: 100}
}

// Validate refuses negative limits; the error names the field.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"queued_jobs", l.QueuedJobs}, {"procs", l.Procs}, {"spec_bytes", l.SpecBytes}, {"argv", l.Argv}, {"env", l.Env}, {"finished_jobs", l.FinishedJobs}} {
		if f.v < 0 {
			return fmt.Errorf("%w: limits.%s = %d, must be >= 0 (0 = no limit)", ErrInvalid, f.name, f.v)
		}
	}
	return nil
}

// CheckSpec refuses a spec larger than the limits allow, whoever submits it. The error names the
// limit and the agent flag that sets it.
func (l Limits) CheckSpec(sp *JobSpec) error {
	if l.Argv > 0 && len(sp.Cmd) > l.Argv {
		return fmt.Errorf("%w: the command line has %d arguments, the cluster allows %d (agent flag --max-argv)", ErrInvalid, len(sp.Cmd), l.Argv)
	}
	if l.Env > 0 && len(sp.Env) > l.Env {
		return fmt.Errorf("%w: the environment has %d variables, the cluster allows %d (agent flag --max-env)", ErrInvalid, len(sp.Env), l.Env)
	}
	if l.SpecBytes > 0 {
		b, err := json.Marshal(sp)
		if err != nil {
			return fmt.Errorf("%w: encode spec: %v", ErrInvalid, err)
		}
		if len(b) > l.SpecBytes {
			return fmt.Errorf("%w: the job's spec is %d bytes, the cluster allows %d (agent flag --max-spec-bytes)", ErrInvalid, len(b), l.SpecBytes)
		}
	}
	return nil
}

// checkQuota refuses a new job of owner that would take them over QueuedJobs or Procs.
func (s *State) checkQuota(owner string, sp *JobSpec) error {
	l := s.Limits
	if l.QueuedJobs == 0 && l.Procs == 0 {
		return nil
	}
	queued, procs := 0, 0
	for _, j := range s.Jobs {
		if j.Owner != owner || j.State.Terminal() {
			continue
		}
		if j.State == StateQueued {
			queued++
		}
		procs += j.Spec.maxCPUs()
	}
	tasks := sp.taskCount() // an array is one job per task
	if l.QueuedJobs > 0 && queued+tasks > l.QueuedJobs {
		what := "this one"
		if tasks > 1 {
			what = fmt.Sprintf("this array adds %d", tasks)
		}
		return fmt.Errorf("%w: %s has %d queued jobs and %s, the cluster allows %d per user (agent flag --max-queued-jobs): wait for some to start or kill some", ErrOverLimit, owner, queued, what, l.QueuedJobs)
	}
	if n := sp.maxCPUs() * tasks; l.Procs > 0 && procs+n > l.Procs {
		return fmt.Errorf("%w: %s's unfinished jobs ask for %d CPUs (processes × --cpus-per-rank), and this one for %d more; the cluster allows %d per user (agent flag --max-user-procs)", ErrOverLimit, owner, procs, n, l.Procs)
	}
	return nil
}

// maxProcs is the most processes the job may hold: NP, or an elastic job's maximum.
func (sp *JobSpec) maxProcs() int {
	if sp.Elastic != nil {
		return max(sp.NP, sp.Elastic.MaxNP)
	}
	return sp.NP
}

// maxCPUs is the most CPUs the job may hold: each of its processes takes CPUs() of them.
func (sp *JobSpec) maxCPUs() int { return sp.maxProcs() * sp.CPUs() }

func (s *State) setLimits(_ time.Time, b *SetLimits) (Result, error) {
	if err := b.Limits.Validate(); err != nil {
		return Result{}, err
	}
	if b.Limits == s.Limits {
		return Result{Noop: true}, nil
	}
	s.Limits = b.Limits
	return Result{}, nil
}
