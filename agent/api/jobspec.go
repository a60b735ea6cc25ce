package api

import "time"

// JobSpec is what a user asks for (POST /v1/jobs, and the spec of every job
// listed). It is the API's own type: the agent converts it to and from the
// raft command schema (raftfsm.JobSpec) at the HTTP boundary, so a rename
// there cannot change these keys. The keys are the ones the raft schema has
// always sent, so old clients keep working.
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
	// Force places the job even when every node is overloaded.
	Force bool `json:"force,omitempty"`
	// MaxAttempts bounds the attempts, the first included; 0 is the cluster's default.
	MaxAttempts int `json:"max_attempts"`
	// Timeout is the wall-clock limit of one attempt in nanoseconds; 0 = none.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Alpha overrides the cluster's compute-versus-network weight for this job; nil = cluster's.
	Alpha *float64 `json:"alpha,omitempty"`
	// Elastic makes the job resizable; nil = fixed size.
	Elastic *ElasticSpec `json:"elastic,omitempty"`
	// Name is the job's name (-J/--job-name); "" = none.
	Name string `json:"name,omitempty"`
	// Begin is the earliest time the job may start (--begin); zero = at once.
	Begin time.Time `json:"begin,omitzero"`
	// Depend lists the job's dependencies (--dependency); all must be met.
	Depend []Dependency `json:"depend,omitempty"`
	// Array submits one job per task (--array); nil = one job.
	Array *ArraySpec `json:"array,omitempty"`
	// Batch runs the command (a batch script) once on the head node, with
	// the allocation in its environment; MPI launches inside it use it.
	Batch bool `json:"batch,omitempty"`
	// Output and Error are the file patterns of -o/--output and -e/--error.
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	// Stdin: the client sends standard input (POST /v1/jobs/{id}/stdin),
	// which the launcher passes to rank 0 (shoal run).
	Stdin bool `json:"stdin,omitempty"`
	// MemPerNode and MemPerRank are the memory limit in bytes (--mem,
	// --mem-per-rank), one of them; 0 = none. CPUsPerRank is
	// --cpus-per-rank; 0 = 1.
	MemPerNode  uint64 `json:"mem_per_node,omitempty"`
	MemPerRank  uint64 `json:"mem_per_rank,omitempty"`
	CPUsPerRank int    `json:"cpus_per_rank,omitempty"`
	// Partition is the partition the job runs in; "" = the default one, if any.
	Partition string `json:"partition,omitempty"`
	// Constraint names the node features the job needs: features joined by
	// & (all) and | (any), as Slurm's --constraint; "" = any node.
	Constraint string `json:"constraint,omitempty"`
}

// Dependency is one condition of --dependency: afterok, afternotok or
// afterany with job (or array) IDs, or singleton without.
type Dependency struct {
	Type string   `json:"type"`
	IDs  []uint64 `json:"ids,omitempty"`
}

// ArraySpec is --array: the task indices, and at most Limit tasks at once (0 = no limit).
type ArraySpec struct {
	Tasks []int `json:"tasks"`
	Limit int   `json:"limit,omitempty"`
}

// HostSlots is one line of a user's hostfile.
type HostSlots struct {
	Host  string `json:"host"`
	Slots int    `json:"slots"` // 0 = as many as placement finds
}

// PENeed asks for PerProc processing elements of a kind (e.g. "gpu") for every process.
type PENeed struct {
	Kind    string `json:"kind"`
	PerProc int    `json:"per_proc"`
}

// ElasticSpec is the resizing contract of an elastic job.
type ElasticSpec struct {
	MinNP      int           `json:"min_np"`
	MaxNP      int           `json:"max_np"`
	Deadline   time.Duration `json:"deadline,omitempty"`   // finish within, from submit, in nanoseconds
	BudgetNH   float64       `json:"budget_nh,omitempty"`  // node-hours
	Iterations int64         `json:"iterations,omitempty"` // total iterations of the program
	// CommHeavy declares the job communication-heavy: it is never grown.
	CommHeavy bool `json:"comm_heavy,omitempty"`
	// CheckpointDir is $SHOAL_CHECKPOINT_DIR; "" = .shoal-checkpoints/JOB in the workdir.
	CheckpointDir string `json:"checkpoint_dir,omitempty"`
}

// KillRequest is POST /v1/jobs/{id}/kill.
// With Array, the ID names an array and every unfinished task of it is killed.
type KillRequest struct {
	User  string `json:"user"`
	Array bool   `json:"array,omitempty"`
}

// HoldRequest is POST /v1/jobs/{id}/hold and /release. With Array, the ID
// names an array and all its queued tasks are held or released.
type HoldRequest struct {
	User  string `json:"user"`
	Array bool   `json:"array,omitempty"`
}

// UpdateRequest is POST /v1/jobs/{id}/update: a queued job's new time
// limit (0: none). With Array, the ID names an array and all its queued
// tasks change. Only root may raise a limit.
type UpdateRequest struct {
	User    string        `json:"user"`
	Array   bool          `json:"array,omitempty"`
	Timeout time.Duration `json:"timeout"`
}

// RequeueRequest is POST /v1/jobs/{id}/requeue: put the job back in the
// queue (its running attempt ends), held too with Hold.
type RequeueRequest struct {
	User string `json:"user"`
	Hold bool   `json:"hold,omitempty"`
}

// UpdateResponse answers an update: the jobs it changed.
type UpdateResponse struct {
	ID   uint64   `json:"id"`
	Jobs []uint64 `json:"jobs"`
}

// HoldResponse answers a hold or release: the jobs it changed.
type HoldResponse struct {
	ID   uint64   `json:"id"`
	Held bool     `json:"held"`
	Jobs []uint64 `json:"jobs"`
}

// KillResponse answers a kill.
type KillResponse struct {
	ID    uint64 `json:"id"`
	State string `json:"state"`
}

// Partition is one row of GET /v1/partitions, and the body of POST
// /v1/partitions (with the acting user): a named set of nodes with
// limits. Times are in nanoseconds; 0 is none.
type Partition struct {
	Name string `json:"name"`
	// Nodes are its nodes, sorted; empty holds every node.
	Nodes           []string      `json:"nodes"`
	Default         bool          `json:"default"`
	MaxTime         time.Duration `json:"max_time"`
	DefaultTime     time.Duration `json:"default_time"`
	MaxNodes        int           `json:"max_nodes"`
	AllowUsers      []string      `json:"allow_users"`
	NoOversubscribe bool          `json:"no_oversubscribe"`
	LoadThreshold   float64       `json:"load_threshold"`
}

// PartitionRequest is POST /v1/partitions (create or replace) and POST
// /v1/partitions/{name}/delete: what root asks for.
type PartitionRequest struct {
	User      string    `json:"user"`
	Partition Partition `json:"partition"`
}
