package raftnode

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"
)

// guardedStable sits between raft and boltdb's stable store. raft v1.7.3
// answers heartbeats on the transport's connection goroutines, which can
// outlive Raft.Shutdown by a moment; one of them writing the current term
// into a closed bolt database makes raft panic ("failed to save current
// term: database not open"). Close waits for operations in flight, and a
// write that arrives after it is dropped: the raft instance it came from is
// already shut down, and a restarted node learns the term again.
type guardedStable struct {
	mu     sync.RWMutex
	closed bool
	s      raft.StableStore
}

var _ raft.StableStore = (*guardedStable)(nil)

var errStoreClosed = errors.New("raft stable store closed")

func (g *guardedStable) Set(k, v []byte) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil
	}
	return g.s.Set(k, v)
}

func (g *guardedStable) SetUint64(k []byte, v uint64) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil
	}
	return g.s.SetUint64(k, v)
}

func (g *guardedStable) Get(k []byte) ([]byte, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, errStoreClosed
	}
	return g.s.Get(k)
}

func (g *guardedStable) GetUint64(k []byte) (uint64, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return 0, errStoreClosed
	}
	return g.s.GetUint64(k)
}

// close runs fn (closing the database) once no operation is in flight, and
// makes later operations no-ops.
func (g *guardedStable) close(fn func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return fn()
}
