package agent

import (
	"errors"
	"net/http"

	"github.com/shoal-hpc/shoal/agent/httpapi"
)

var (
	// ErrNoLeader is returned when a write found no raft leader before its
	// deadline.
	ErrNoLeader = httpapi.ErrNoLeader
	// ErrNotLeader is returned by a forwarded write that reached a node
	// that is no longer the leader; the sender retries.
	ErrNotLeader = httpapi.ErrNotLeader
	// ErrClient is returned by a raft operation asked of a client agent,
	// which runs no raft (roles.go): ask a server ('shoal members').
	ErrClient = httpapi.WithStatus(http.StatusConflict, errors.New("this agent is a client and runs no raft; ask a server (see 'shoal members')"))
	// ErrStopping is returned by a write proposed while the agent stops.
	ErrStopping = errors.New("the agent is stopping")
)
