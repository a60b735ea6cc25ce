package raftfsm

import (
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// FSM is shoal's raft.FSM. Raft calls Apply, Snapshot and Restore from one goroutine; the agent
// reads concurrently through State, View and Index.
type FSM struct {
	mu    sync.RWMutex
	state *State
	index uint64 // raft index of the last applied entry
	// changed is closed by the next Apply or Restore (Changed); nil until
	// someone waits.
	changed chan struct{}
}

var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.FSMSnapshot = (*fsmSnapshot)(nil)
)

// New returns an FSM holding a fresh cluster's state.
func New() *FSM { return &FSM{state: NewState()} }

// Apply decodes and applies one committed log entry and returns a Result (never a panic). A
// refused command still counts as applied for Index, but leaves the state unchanged.
func (f *FSM) Apply(l *raft.Log) interface{} {
	if l == nil {
		return Result{Err: fmt.Errorf("apply: %w: nil log", ErrMalformed)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.Index > f.index {
		f.index = l.Index
	}
	f.wake()
	c, err := Decode(l.Data)
	if err != nil {
		return Result{Index: l.Index, Err: fmt.Errorf("log %d: %w", l.Index, err)}
	}
	c.Index = l.Index
	res := f.state.Apply(c)
	res.Index = l.Index
	if res.Err != nil {
		res.Err = fmt.Errorf("log %d: %w", l.Index, res.Err)
	}
	return res
}

// Changed returns a channel that is closed once the next log entry has
// been applied (or a snapshot restored): a reader that checks the state
// after taking the channel, and waits on it, misses no change and polls
// nothing. Any number of readers may wait on one channel.
func (f *FSM) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// wake closes the channel of Changed's waiters. The caller holds f.mu for
// writing, so they read the state only once the change is in it.
func (f *FSM) wake() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// State returns a deep copy of the state, safe to keep and modify.
func (f *FSM) State() *State {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.Clone()
}

// Shared returns a copy of the state that shares its jobs (State.Shared):
// cheap, safe to keep, never to modify.
func (f *FSM) Shared() *State {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.Shared()
}

// View calls fn with the live state under a read lock, avoiding a copy. fn must not modify the
// state, keep references into it after returning, or call back into the FSM.
func (f *FSM) View(fn func(*State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.state)
}

// ViewAt is View that also hands fn the raft index of the last entry
// applied to the state it reads.
func (f *FSM) ViewAt(fn func(index uint64, st *State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.index, f.state)
}

// Index returns the raft index of the last applied log entry.
func (f *FSM) Index() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.index
}
