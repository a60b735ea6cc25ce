package raftfsm

import (
	"time"

	"github.com/shoal-hpc/shoal/alloc"
)

// JobState is the state of a job, and of each of its attempts. See doc.go for the diagram.
type JobState string

// Job and attempt states. StatePlacing is part of the public vocabulary (the job JSON's states) but
// the FSM never enters it: the leader places a queued job in one command (place_job), which moves
// it straight to launching, where the co-allocation barrier runs.
const (
	StateQueued    JobState = "queued"
	StatePlacing   JobState = "placing"
	StateLaunching JobState = "launching"
	StateRunning   JobState = "running"
	StateDone      JobState = "done"
	StateFailed    JobState = "failed"
	StateKilled    JobState = "killed"
	// StateCheckpointed is an attempt of an elastic job that exited 75: it wrote a checkpoint
	// and the job is relaunched on its new size. A job is never in this state, only its attempts.
	StateCheckpointed JobState = "checkpointed"
)

// ExitCheckpointed is the exit status by which an elastic program says "checkpointed, not
// converged: relaunch me" (EX_TEMPFAIL).
const ExitCheckpointed = 75

// Terminal reports whether s is an end state (done, failed, killed).
func (s JobState) Terminal() bool {
	return s == StateDone || s == StateFailed || s == StateKilled || s == StateCheckpointed
}

// Live reports whether s is a state in which the job holds slots (launching, running).
func (s JobState) Live() bool { return s == StateLaunching || s == StateRunning }

// DefaultMaxAttempts is used when a submit leaves JobSpec.MaxAttempts at 0.
const DefaultMaxAttempts = 3

// RootUser may kill any user's job.
const RootUser = "root"

// Job is one submitted job with the history of its attempts.
type Job struct {
	ID        uint64   `json:"id"`
	RequestID string   `json:"request_id"`
	Owner     string   `json:"owner"`
	Spec      JobSpec  `json:"spec,omitzero"` // zero only in a snapshot's task that shares its array's (jobJSON)
	State     JobState `json:"state"`
	// Attempt is the number of the current (or last) attempt; 0 before the first placement.
	Attempt  int       `json:"attempt"`
	Attempts []Attempt `json:"attempts,omitempty"`
	// ExitCode is set when the program's exit status is known (done, or failed by finish_attempt).
	ExitCode *int   `json:"exit_code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// WaitReason says why the leader leaves a queued job waiting, since WaitSince; empty once
	// the job is placed, rejected or killed (set_wait_reason).
	WaitReason  string    `json:"wait_reason,omitempty"`
	WaitSince   time.Time `json:"wait_since,omitzero"`
	SubmittedAt time.Time `json:"submitted_at"`
	// StartedAt is when the current attempt started running; zero while queued or launching.
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Seq orders jobs of equal priority first come, first served. It is set at submit and kept
	// when the job is requeued, so a requeued job keeps its place in line.
	Seq uint64 `json:"seq"`
	// Elastic is the resizing record of an elastic job; nil for a fixed-size one.
	Elastic *ElasticStatus `json:"elastic,omitempty"`
	// Held keeps a queued job out of placement until it is released (hold_job).
	Held bool `json:"held,omitempty"`
	// ArrayJobID is, for a task of an array, the ID of the array: its first task's job ID.
	// ArrayTaskID is the task's index in the array (--array), ArrayLimit the most tasks of the
	// array that may hold slots at once (0 = no limit). All zero for a job that is no array's.
	ArrayJobID  uint64 `json:"array_job_id,omitempty"`
	ArrayTaskID int    `json:"array_task_id,omitempty"`
	ArrayLimit  int    `json:"array_limit,omitempty"`
}

// InArray reports whether the job is a task of an array.
func (j *Job) InArray() bool { return j.ArrayJobID != 0 }

// failures is the number of attempts that count against MaxAttempts: every attempt but those
// that ended by checkpointing (a resize is not a failure).
func (j *Job) failures() int {
	n := j.Attempt
	for i := range j.Attempts {
		if j.Attempts[i].Uncounted {
			n--
		}
	}
	if j.Elastic == nil {
		return n
	}
	return n - j.Elastic.Checkpoints
}

// ElasticStatus is what raft keeps of an elastic job's resizing, so that the decision
// layer resumes on a new leader where the old one stopped.
type ElasticStatus struct {
	// TargetNP is the process count the next placement asks for.
	TargetNP int `json:"target_np"`
	// Checkpoints counts attempts that ended by checkpointing (exit 75).
	Checkpoints int `json:"checkpoints,omitempty"`
	// ResizeAttempt is the attempt asked to checkpoint for a resize (SIGUSR1), at ResizeAt; 0 = none.
	ResizeAttempt int       `json:"resize_attempt,omitempty"`
	ResizeAt      time.Time `json:"resize_at,omitzero"`
	// RestartCosts are the measured restarts, oldest first, at most MaxRestartCosts: from the
	// resize request to the next attempt's first progress report.
	RestartCosts []time.Duration `json:"restart_costs,omitempty"`
	// History lists every change of node count with its reason, oldest first, at most MaxHistory.
	History []Resize `json:"history,omitempty"`
}

// Resize is one change of an elastic job's process count.
type Resize struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"` // the attempt that was resized (or, for a placement, placed)
	FromNP  int       `json:"from_np"`
	ToNP    int       `json:"to_np"`
	Reason  string    `json:"reason"`
}

// Bounds on the elastic record.
const (
	MaxRestartCosts = 8
	MaxHistory      = 64
)

// Progress is what the program of an attempt reported: its first and latest iteration and when.
type Progress struct {
	FirstIter int64     `json:"first_iter"`
	FirstAt   time.Time `json:"first_at"`
	Iter      int64     `json:"iter"`
	At        time.Time `json:"at"`
	// Comm is the latest reported share of an iteration spent communicating, in [0,1].
	Comm    float64 `json:"comm,omitempty"`
	Reports int     `json:"reports"`
}

// Current returns the current attempt, or nil before the first placement.
func (j *Job) Current() *Attempt {
	if j.Attempt < 1 || j.Attempt > len(j.Attempts) {
		return nil
	}
	return &j.Attempts[j.Attempt-1]
}

// LatestStarted is the last attempt of j that started, or nil: the one
// whose output `shoal logs` shows.
func (j *Job) LatestStarted() *Attempt {
	for i := len(j.Attempts) - 1; i >= 0; i-- {
		if !j.Attempts[i].StartedAt.IsZero() {
			return &j.Attempts[i]
		}
	}
	return nil
}

// JobSpec is what the user asked for (the job flags of shoal run and shoal submit).
type JobSpec struct {
	Cmd     []string `json:"cmd"`
	Env     []string `json:"env,omitempty"` // "KEY=VALUE", in the user's order
	Workdir string   `json:"workdir,omitempty"`
	// NP is the total number of processes (-n).
	NP int `json:"np"`
	// PPN is processes per node (--ppn); 0 lets placement decide.
	PPN      int         `json:"ppn,omitempty"`
	Priority int         `json:"priority,omitempty"` // higher runs first
	Policy   string      `json:"policy,omitempty"`   // placement policy; "" = cluster default
	Relax    string      `json:"relax,omitempty"`    // GERBIL relaxation mode; "" = none
	Hostfile []HostSlots `json:"hostfile,omitempty"`
	// Oversubscribe: place on busy nodes (degraded) rather than wait.
	Oversubscribe bool     `json:"oversubscribe"`
	PEs           []PENeed `json:"pes,omitempty"`
	// PEsDetected says PEs were found in the executable's libraries rather than declared.
	PEsDetected bool   `json:"pes_detected,omitempty"`
	MPI         string `json:"mpi,omitempty"` // "mpich", "openmpi", "none"; "" = detect
	// Immediate: on-line job, start now or fail at once with the reason (no queueing).
	Immediate bool `json:"immediate,omitempty"`
	// Force places the job even when every node is overloaded (seed 002 §6
	// recommends waiting; the user insists).
	Force bool `json:"force,omitempty"`
	// MaxAttempts bounds the attempts, the first included; 0 at submit means DefaultMaxAttempts.
	MaxAttempts int `json:"max_attempts"`
	// Timeout is the wall-clock limit of one attempt in nanoseconds; 0 = none.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Alpha overrides the cluster's compute-versus-network weight for this job; nil = cluster's.
	Alpha *float64 `json:"alpha,omitempty"`
	// Elastic makes the job resizable; nil = fixed size.
	Elastic *ElasticSpec `json:"elastic,omitempty"`
	// Name is the job's name (-J); "" = none. The singleton dependency matches it.
	Name string `json:"name,omitempty"`
	// Begin is the earliest time the leader places the job (--begin); zero = at once.
	Begin time.Time `json:"begin,omitzero"`
	// Depend lists the job's dependencies (--dependency); the job waits until all are met.
	Depend []Dependency `json:"depend,omitempty"`
	// Array makes submit_job create one job per task (--array). Only the submit carries it:
	// the tasks' own specs have it nil (their index and limit are on the Job).
	Array *ArraySpec `json:"array,omitempty"`
	// Batch runs Cmd once, on the head node, with the allocation described in its environment
	// (a batch script, as sbatch runs it): MPI launches inside it use the allocation.
	Batch bool `json:"batch,omitempty"`
	// Output and Error are file patterns (%j %A %a %N %u %x, relative to Workdir) the head node
	// writes the job's stdout and stderr to, as the job's owner; "" = the attempt's logs only.
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	// Stdin: the client (shoal run) sends standard input, which the launcher passes to rank 0.
	Stdin bool `json:"stdin,omitempty"`
	// Confinement (usage.go): Slurm's --mem, --mem-per-rank and
	// --cpus-per-rank, enforced by each node's cgroup of the attempt.
	// Memory in bytes, 0 = no limit; CPUsPerRank 0 means 1.
	MemPerNode  uint64 `json:"mem_per_node,omitempty"`
	MemPerRank  uint64 `json:"mem_per_rank,omitempty"`
	CPUsPerRank int    `json:"cpus_per_rank,omitempty"`
	// Partition is the partition the job runs in (partition.go); "" = none (no partition is
	// set, or the job came before partitions did). Submit gives it the default one.
	Partition string `json:"partition,omitempty"`
	// Constraint names the node features the job needs (--constraint, constraint.go); "" = any node.
	Constraint string `json:"constraint,omitempty"`
}

// HostSlots is one line of a user's hostfile: alloc.HostSlots, the type
// placement reads a hostfile in.
type HostSlots = alloc.HostSlots

// PENeed asks for PerProc processing elements of a kind (e.g. "gpu") for
// every process: alloc.PENeed, the type placement reads the need in.
type PENeed = alloc.PENeed

// ElasticSpec is the resizing contract of an elastic job: the FSM stores and validates the
// declaration, and resize_job and finish_attempt(75) drive the resizing.
type ElasticSpec struct {
	MinNP      int           `json:"min_np"`
	MaxNP      int           `json:"max_np"`
	Deadline   time.Duration `json:"deadline,omitempty"`   // finish within, from submit
	BudgetNH   float64       `json:"budget_nh,omitempty"`  // node-hours
	Iterations int64         `json:"iterations,omitempty"` // total iterations of the program
	// CommHeavy declares the job communication-heavy: it is never grown (seed 004).
	CommHeavy bool `json:"comm_heavy,omitempty"`
	// CheckpointDir is $SHOAL_CHECKPOINT_DIR; "" = .shoal-checkpoints/JOB in the workdir.
	CheckpointDir string `json:"checkpoint_dir,omitempty"`
}

// Unit is the processes of one launch unit of an elastic job ("a node"): PPN, or 1 without.
func (s *JobSpec) Unit() int { return max(1, s.PPN) }

// Attempt is one launch of a job on one allocation.
type Attempt struct {
	N              int      `json:"n"`
	Hosts          []Host   `json:"hosts"`
	Head           string   `json:"head"` // node that runs the launcher (mpiexec)
	Degraded       bool     `json:"degraded,omitempty"`
	DegradedReason string   `json:"degraded_reason,omitempty"`
	Acks           []string `json:"acks,omitempty"` // nodes that reserved their slots, sorted
	// Lost names the nodes this attempt lost, when that is why it failed.
	Lost   []string `json:"lost,omitempty"`
	State  JobState `json:"state"`
	Reason string   `json:"reason,omitempty"`
	// PlacedAt is when the allocation was committed (start of co-allocation).
	PlacedAt  time.Time `json:"placed_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	ExitCode  *int      `json:"exit_code,omitempty"`
	// Progress is what the attempt's program reported (shoal progress); nil = nothing yet.
	Progress *Progress `json:"progress,omitempty"`
	// Usage is what the attempt used on each node, sorted by node (record_usage, usage.go).
	Usage []NodeUsage `json:"usage,omitempty"`
	// Steps are the MPI launches of a batch attempt, in order (record_step, step.go).
	Steps []Step `json:"steps,omitempty"`

	// GPUs are the GPU indices the attempt holds on each node that bound
	// some when it reserved its slots (ack_reservation), sorted by node.
	GPUs []NodeGPUs `json:"gpus,omitempty"`
	// FailedIndex is the raft index of the fail_attempt entry that ended
	// the attempt (recordFailedIndex); 0 for an attempt that did not fail
	// that way.
	FailedIndex uint64 `json:"failed_index,omitempty"`
	// Uncounted marks an attempt that does not count against the job's
	// max_attempts: an operator's restore ended it, or skipped its number
	// (Restored).
	Uncounted bool `json:"uncounted,omitempty"`

	// PlacedIndex is the raft index of the place_job entry that created the
	// attempt (recordPlacedIndex); 0 for an attempt recorded before shoal
	// kept it (an older snapshot or log).
	PlacedIndex uint64 `json:"placed_index,omitempty"`
}

// NP is the number of processes of the attempt.
func (a *Attempt) NP() int {
	n := 0
	for _, h := range a.Hosts {
		n += h.NP
	}
	return n
}

// Host is one node of an allocation and the processes it runs. It is
// alloc.Host, the type placement answers in, so a placement is stored as
// it was decided; alloc's JSON keys are this package's stored format.
type Host = alloc.Host

// Ended reports whether the attempt is over.
func (a *Attempt) Ended() bool { return a.State.Terminal() }

// Holds reports whether node is part of the attempt's allocation.
func (a *Attempt) Holds(node string) bool {
	for _, h := range a.Hosts {
		if h.Node == node {
			return true
		}
	}
	return false
}

// Acked reports whether node has reserved its slots for the attempt.
func (a *Attempt) Acked(node string) bool {
	for _, n := range a.Acks {
		if n == node {
			return true
		}
	}
	return false
}

// Pending returns the allocated nodes that have not acknowledged yet, in allocation order.
func (a *Attempt) Pending() []string {
	var out []string
	for _, h := range a.Hosts {
		if !a.Acked(h.Node) {
			out = append(out, h.Node)
		}
	}
	return out
}

// AllAcked reports whether every allocated node reserved its slots: the co-allocation barrier is
// released and the head node may start the launcher.
func (a *Attempt) AllAcked() bool { return len(a.Pending()) == 0 }

// Clone returns a deep copy of j that shares nothing with it.
func (j *Job) Clone() *Job { return j.clone() }

func (j *Job) clone() *Job {
	if j == nil {
		return nil
	}
	c := *j
	c.Spec = j.Spec.clone()
	c.ExitCode = clonePtr(j.ExitCode)
	if j.Elastic != nil {
		e := *j.Elastic
		e.RestartCosts = cloneSlice(j.Elastic.RestartCosts)
		e.History = cloneSlice(j.Elastic.History)
		c.Elastic = &e
	}
	if j.Attempts != nil {
		c.Attempts = make([]Attempt, len(j.Attempts))
		for i := range j.Attempts {
			c.Attempts[i] = j.Attempts[i].clone()
		}
	}
	return &c
}

func (s JobSpec) clone() JobSpec {
	c := s
	c.Cmd = cloneSlice(s.Cmd)
	c.Env = cloneSlice(s.Env)
	c.Hostfile = cloneSlice(s.Hostfile)
	c.PEs = cloneSlice(s.PEs)
	c.Alpha = clonePtr(s.Alpha)
	c.Elastic = clonePtr(s.Elastic)
	if s.Depend != nil {
		c.Depend = make([]Dependency, len(s.Depend))
		for i, d := range s.Depend {
			c.Depend[i] = Dependency{Type: d.Type, IDs: cloneSlice(d.IDs)}
		}
	}
	if s.Array != nil {
		c.Array = &ArraySpec{Tasks: cloneSlice(s.Array.Tasks), Limit: s.Array.Limit}
	}
	return c
}

func (a Attempt) clone() Attempt {
	c := a
	c.Hosts = cloneSlice(a.Hosts)
	c.Acks = cloneSlice(a.Acks)
	c.Lost = cloneSlice(a.Lost)
	c.ExitCode = clonePtr(a.ExitCode)
	c.Progress = clonePtr(a.Progress)
	c.Usage = cloneSlice(a.Usage)
	if a.GPUs != nil {
		c.GPUs = make([]NodeGPUs, len(a.GPUs))
		for i, g := range a.GPUs {
			c.GPUs[i] = NodeGPUs{Node: g.Node, Indices: cloneSlice(g.Indices)}
		}
	}
	if a.Steps != nil {
		c.Steps = make([]Step, len(a.Steps))
		for i, st := range a.Steps {
			st.Cmd, st.ExitCode = cloneSlice(st.Cmd), clonePtr(st.ExitCode)
			c.Steps[i] = st
		}
	}
	return c
}

// clonePtr copies the value behind a pointer of a struct without
// references of its own (ints, floats, flat structs), keeping nil as nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneSlice copies a slice of values, keeping nil as nil (so JSON and DeepEqual see no change).
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
