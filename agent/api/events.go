package api

import (
	"encoding/json"
	"time"
)

// IndexHeader is set on every blocking read: the index the answer
// reflects, to pass as ?index= to wait for the next change. Reads of jobs
// and history count in the raft index of the replicated state; reads of
// nodes, members and probes in the agent's own count of gossip changes.
// A committed write (a submit, a kill) sets it to the raft index it was
// committed at, to pass as ?min_index= (MinIndexParam) to read it back.
const IndexHeader = "X-Shoal-Index"

// Bounds of a blocking read's ?wait=.
const (
	// DefaultWait is the wait of a read with ?index= and no ?wait=.
	DefaultWait = 5 * time.Minute
	// MaxWait is the longest wait a read accepts; a longer one is cut to it.
	MaxWait = 5 * time.Minute
)

// KeepaliveInterval is how often GET /v1/events writes a comment line
// when no event comes, so proxies and clients know the stream is alive.
const KeepaliveInterval = 15 * time.Second

// Event is one server-sent event of GET /v1/events (the data line).
type Event struct {
	// Index is the raft index of the state the event was seen in; events
	// seen together share it (see the stream's doc).
	Index uint64 `json:"index"`
	// Topic is job, attempt, node or probe.
	Topic string `json:"topic"`
	// Type is what happened, in snake_case: submitted, placed, started,
	// ended, cancelled, requeued, held, released, updated, purged (jobs);
	// placed, started, progress, step, ended (attempts); alive, suspect,
	// dead, left, draining, drained, undrained, restarted, updated, removed
	// (nodes); starting, running, exited, stale, node-dead, restarted,
	// removed (probes); reset (any topic: re-read its state).
	Type string `json:"type"`
	// Key is the job ID, JOB/ATTEMPT, the node's name or NODE/KIND.
	Key string `json:"key"`
	// Payload is the subject as its read answers it: a Job, an Attempt, a
	// Node or a ProbeInfo; null for reset, purged and removed.
	Payload json.RawMessage `json:"payload"`
}
