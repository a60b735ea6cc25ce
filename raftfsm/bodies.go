package raftfsm

import "time"

// SubmitJob (submit_job) adds a queued job. Re-applying the same RequestID returns the job that
// request created: a client that retries after ErrLeadershipLost gets exactly one job.
type SubmitJob struct {
	RequestID string  `json:"request_id"`
	Owner     string  `json:"owner"`
	Spec      JobSpec `json:"spec"`
}

// PlaceJob (place_job) commits an allocation: queued → launching, the first step of the two-step
// co-allocation. Attempt must be the job's attempt + 1. Head defaults to the first host.
type PlaceJob struct {
	ID             uint64 `json:"id"`
	Attempt        int    `json:"attempt"`
	Hosts          []Host `json:"hosts"`
	Head           string `json:"head,omitempty"`
	Degraded       bool   `json:"degraded,omitempty"`
	DegradedReason string `json:"degraded_reason,omitempty"`
	// Reason says why an elastic job gets a process count other than its target (a node was
	// lost, fewer are free); it goes into the job's resize history.
	Reason string `json:"reason,omitempty"`
}

// AckReservation (ack_reservation) records that Node reserved its slots for the attempt.
type AckReservation struct {
	ID      uint64 `json:"id"`
	Attempt int    `json:"attempt"`
	Node    string `json:"node"`
	// GPUs are the indices of the node's GPUs the attempt gets there, as
	// many as its processes there need; none when the job needs none or
	// the node binds none.
	GPUs []int `json:"gpus,omitempty"`
}

// StartJob (start_job) releases the barrier: launching → running once every node acked.
type StartJob struct {
	ID      uint64 `json:"id"`
	Attempt int    `json:"attempt"`
}

// FinishAttempt (finish_attempt) records the program's exit: 0 → done, anything else → failed
// (the program failed; it is not retried). ExitCode is required.
type FinishAttempt struct {
	ID       uint64 `json:"id"`
	Attempt  int    `json:"attempt"`
	ExitCode *int   `json:"exit_code"`
}

// FailAttempt (fail_attempt) ends the attempt for a reason outside the program (co-allocation
// timeout, node death, launcher failure): the job is requeued while Retry and attempts remain,
// else it fails with Reason.
type FailAttempt struct {
	ID      uint64 `json:"id"`
	Attempt int    `json:"attempt"`
	Reason  string `json:"reason"`
	Retry   bool   `json:"retry"`
	// Lost names the nodes the attempt lost (died or stopped answering);
	// the scheduler keeps the retry off them until gossip catches up.
	Lost []string `json:"lost,omitempty"`
}

// RejectJob (reject_job) fails a queued job that cannot be placed (an immediate job with no room,
// a job larger than the cluster, a missing executable), with Reason.
type RejectJob struct {
	ID     uint64 `json:"id"`
	Reason string `json:"reason"`
}

// KillJob (kill_job) kills a job that has not ended. Only the owner or root may.
// With Array, ID names an array and every unfinished task of it is killed.
type KillJob struct {
	ID    uint64 `json:"id"`
	User  string `json:"user"`
	Array bool   `json:"array,omitempty"`
}

// SetProbeDuties (set_probe_duties) records the bandwidth schedule of Cycle, replacing the
// duties of the same cycle (a node dropped mid-cycle) or an older one.
type SetProbeDuties struct {
	Cycle    uint64        `json:"cycle"`
	Rounds   [][]Test      `json:"rounds"`
	RoundLen time.Duration `json:"round_len,omitempty"`
}

// ProbeRestart (probe_restart) orders a relaunch of a probe. Generation is the generation the
// leader saw fail: the command is a compare-and-swap, so a re-proposed restart is refused with
// ErrStaleGeneration instead of counting twice.
type ProbeRestart struct {
	Node       string `json:"node"`
	Kind       string `json:"kind"`
	Reason     string `json:"reason"`
	Generation uint64 `json:"generation"`
}

// SetSettings (set_settings) replaces the placement weights after Settings.Validate.
type SetSettings struct {
	Settings Settings `json:"settings"`
}

// SetLimits (set_limits) replaces the per-user limits after Limits.Validate. The leader proposes
// its agent's flags when they differ from the state's.
type SetLimits struct {
	Limits Limits `json:"limits"`
}

// RemoveNode (remove_node) handles a node gone for good: every live attempt that holds it fails
// with retry, its probe records go, and it is dropped from the remaining probe duties.
type RemoveNode struct {
	Node string `json:"node"`
}

// NodeRestarted (node_restarted) is a node's agent starting a new life: the processes of its
// last life died with it. Every live attempt the node had joined (acknowledged its reservation,
// or running) fails with retry, so no attempt is ever started twice under one number. Attempts
// placed on the node that it has not acknowledged yet are left alone: the new life acknowledges
// them. Repeating the command is a no-op while the new life has acknowledged nothing.
//
// Adopted are the running attempts the node heads whose processes outlived its last life under
// their supervisors (agent/jobexec): the new life reports their end, and they stay running. An
// entry that names an attempt that is not running, is not the job's current one, or that the
// node does not head, changes nothing: the attempt is judged as if it were not listed.
type NodeRestarted struct {
	Node    string       `json:"node"`
	Adopted []AttemptRef `json:"adopted,omitempty"`
}

// AttemptRef names one attempt of one job.
type AttemptRef struct {
	ID      uint64 `json:"id"`
	Attempt int    `json:"attempt"`
}

// ReportProgress (report_progress) records the iteration the program of a running attempt
// reached (shoal progress). Reports are monotone: one that does not advance is a no-op, so
// re-proposals and reports overtaken by later ones change nothing.
type ReportProgress struct {
	ID      uint64 `json:"id"`
	Attempt int    `json:"attempt"`
	Iter    int64  `json:"iter"`
	// Comm is the share of an iteration spent communicating, in [0,1]; nil = not reported.
	Comm *float64 `json:"comm,omitempty"`
}

// ResizeJob (resize_job) asks the running attempt of an elastic job to checkpoint (the nodes
// send SIGUSR1) so that it is relaunched on TargetNP processes; the leader's decision layer
// proposes it with its Reason. An attempt is asked once.
type ResizeJob struct {
	ID       uint64 `json:"id"`
	Attempt  int    `json:"attempt"`
	TargetNP int    `json:"target_np"`
	Reason   string `json:"reason"`
}

// SetWaitReason (set_wait_reason) records why the leader left a queued job waiting (the cluster is
// overloaded, not enough free slots, ...), so that every node shows it. The leader proposes it
// only when the reason changes; the same reason again is a no-op, and "" clears it. Placing,
// rejecting or killing the job clears it too.
type SetWaitReason struct {
	ID     uint64 `json:"id"`
	Reason string `json:"reason"`
}
