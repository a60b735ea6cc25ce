package agent

import "errors"

var (
	// ErrNoLeader is returned when a write found no raft leader before its
	// deadline.
	ErrNoLeader = errors.New("no raft leader")
	// ErrNotLeader is returned by a forwarded write that reached a node
	// that is no longer the leader; the sender retries.
	ErrNotLeader = errors.New("this agent is not the raft leader")
)
