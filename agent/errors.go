package agent

import "github.com/shoal-hpc/shoal/agent/httpapi"

var (
	// ErrNoLeader is returned when a write found no raft leader before its
	// deadline.
	ErrNoLeader = httpapi.ErrNoLeader
	// ErrNotLeader is returned by a forwarded write that reached a node
	// that is no longer the leader; the sender retries.
	ErrNotLeader = httpapi.ErrNotLeader
)
