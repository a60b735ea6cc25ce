package api

import "time"

// Means is an attribute now and over the last 1, 5 and 15 minutes.
type Means struct {
	Now float64 `json:"now"`
	M1  float64 `json:"1m"`
	M5  float64 `json:"5m"`
	M15 float64 `json:"15m"`
}

// PE is a kind of processing element a node offers.
type PE struct {
	Kind     string `json:"kind"`
	Model    string `json:"model,omitempty"`
	Count    int    `json:"count"`
	MemBytes uint64 `json:"mem_bytes,omitempty"`
}

// Node is one row of GET /v1/nodes.
type Node struct {
	Name     string  `json:"name"`
	Addr     string  `json:"addr"`
	Status   string  `json:"status"`
	Hostname string  `json:"hostname"`
	CPUModel string  `json:"cpu_model,omitempty"`
	Cores    int     `json:"cores"`
	Threads  int     `json:"threads"`
	MHz      float64 `json:"mhz"`
	MemTotal uint64  `json:"mem_total"`
	Load     Means   `json:"load"`
	CPUUtil  Means   `json:"cpu_util"`
	MemAvail Means   `json:"mem_avail"`
	NetFlow  Means   `json:"net_flow"`
	// NetRx and NetTx are the latest sample's traffic received and sent,
	// bytes/s: what placement takes off each direction of the
	// node's link now.
	NetRx    float64   `json:"net_rx"`
	NetTx    float64   `json:"net_tx"`
	Users    int       `json:"users"`
	PEs      []PE      `json:"pes"`
	Switch   string    `json:"switch,omitempty"`
	Sampled  time.Time `json:"sampled_at,omitzero"`
	HTTPPort int       `json:"http_port,omitempty"`
	RaftPort int       `json:"raft_port,omitempty"`
	// Drain is "draining" while a drained node still runs attempts,
	// "drained" once it runs none, "" when it is in service.
	Drain string `json:"drain"`
	// DrainDeadline is when attempts left on a draining node are requeued.
	DrainDeadline *time.Time `json:"drain_deadline,omitempty"`
	// Confined is whether the node runs its jobs in cgroups (memory and
	// CPU limits, kill, usage); Unconfined says why not.
	Confined   bool   `json:"confined"`
	Unconfined string `json:"unconfined,omitempty"`
	// Features are the operator's names for what the node offers, which
	// a job's --constraint selects on.
	Features []string `json:"features,omitempty"`
	// Role is the node's part in the cluster as it gossips it:
	// server-voter, server-nonvoter (raft servers) or client (follows
	// the state from a server); "" while it has not settled.
	Role string `json:"role"`
	// Health is "ok", or "unhealthy" for a server whose raft log cannot
	// be written (a full or read-only disk); Unhealthy then says why. Its
	// copy of the cluster state may be stale: it refuses to answer reads
	// from it, and the leader demotes it from voter until it recovers.
	Health    string `json:"health"`
	Unhealthy string `json:"unhealthy,omitempty"`

	// SwitchInferred is true when Switch is the switch the leader inferred
	// from the bandwidth tests (raft's set_switches), not the node's --switch.
	SwitchInferred bool `json:"switch_inferred,omitempty"`
}

// Member is one row of GET /v1/members.
type Member struct {
	Name   string `json:"name"`
	Addr   string `json:"addr"`
	Status string `json:"status"`
	// Role is the node's raft role: leader, voter, nonvoter for raft's
	// servers, client for the agents that follow the state from a server,
	// or none while a node has not settled (not in raft yet).
	Role string `json:"role"`
	// API is HOST:PORT of the node's HTTP API ("" until it gossiped it):
	// the CLI keeps these to reach another agent when its own is down.
	API string `json:"api,omitempty"`
}

// Leader is GET /v1/leader.
type Leader struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
}

// Health is GET /v1/health, the one endpoint open without a token.
type Health struct {
	// Status is "ok", or "unhealthy" when the agent cannot vouch for its
	// copy of the cluster state (Reason says why: its raft log cannot be
	// written). The answer is 200 either way: the agent is up and runs
	// its jobs, which is what a job's head asks.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Name   string `json:"name"`
	// Boot names this run of the agent: it changes on every restart.
	Boot string `json:"boot,omitempty"`
}

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
}

// ApplyResult is the answer to a committed write.
type ApplyResult struct {
	Index uint64 `json:"index"`
	JobID uint64 `json:"job_id,omitempty"`
	// JobIDs are the jobs a command on many changed (an array's hold or kill).
	JobIDs []uint64 `json:"job_ids,omitempty"`
	Err    string   `json:"error,omitempty"`
	Code   string   `json:"code,omitempty"`
	// Results are a batch's: one per command it applied, in order; fewer
	// than it carried when it stopped at a refusal.
	Results []CommandResult `json:"results,omitempty"`
}

// CommandResult is the answer to one command of a batch, committed at
// the batch's index.
type CommandResult struct {
	JobID  uint64   `json:"job_id,omitempty"`
	JobIDs []uint64 `json:"job_ids,omitempty"`
	Err    string   `json:"error,omitempty"`
	Code   string   `json:"code,omitempty"`
}

// Result is the answer to command i of a batch as an ApplyResult of its
// own, at the batch's index; ok is false when the batch did not apply it.
func (r ApplyResult) Result(i int) (res ApplyResult, ok bool) {
	if i < 0 || i >= len(r.Results) {
		return ApplyResult{}, false
	}
	c := r.Results[i]
	return ApplyResult{Index: r.Index, JobID: c.JobID, JobIDs: c.JobIDs, Err: c.Err, Code: c.Code}, true
}
