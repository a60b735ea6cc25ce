package raftnode

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// notifyingFSM wakes the agent's reconcilers after every applied entry, so
// a job moves from submitted to placed to reserved to running in a few
// round trips instead of a few polling periods. Signals are coalesced and
// never block Apply; the reconcilers are level-triggered, so a merged
// signal loses nothing. It also hands every applied command entry and
// every restore to onApply and onRestore (a replica.Feed, which streams
// them to clients), after the FSM changed.
type notifyingFSM struct {
	*raftfsm.FSM
	wake      []chan struct{}
	onApply   func(index, term uint64, data []byte)
	onRestore func(index uint64)
}

var _ raft.FSM = (*notifyingFSM)(nil)

func (f *notifyingFSM) Apply(l *raft.Log) interface{} {
	r := f.FSM.Apply(l)
	// raft hands the FSM only command entries (and configurations to a
	// ConfigurationStore, which this FSM is not); check anyway, since a
	// client applies whatever it is sent as a command.
	if f.onApply != nil && l.Type == raft.LogCommand {
		f.onApply(l.Index, l.Term, l.Data)
	}
	f.signal()
	return r
}

// Restore replaces the state and tells onRestore the index it now
// stands at.
func (f *notifyingFSM) Restore(rc io.ReadCloser) error {
	if err := f.FSM.Restore(rc); err != nil {
		return err
	}
	if f.onRestore != nil {
		f.onRestore(f.FSM.Index())
	}
	f.signal()
	return nil
}

func (f *notifyingFSM) signal() {
	for _, ch := range f.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Current says whether r's state is current enough to stream to client
// agents (replica.Feed.SetHealth): the leader's is, a follower's is while it
// heard from a leader within lag; a candidate, a node cut off from the
// leader or a shut down one streams nothing, so its clients move on.
func Current(r *raft.Raft, lag time.Duration) error {
	switch r.State() {
	case raft.Leader:
		return nil
	case raft.Shutdown:
		return errors.New("raft is shut down")
	}
	if last := r.LastContact(); last.IsZero() || time.Since(last) > lag {
		return fmt.Errorf("no word from a raft leader for over %v", lag)
	}
	return nil
}
