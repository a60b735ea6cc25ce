package raftnode

import (
	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// notifyingFSM wakes the agent's reconcilers after every applied entry, so
// a job moves from submitted to placed to reserved to running in a few
// round trips instead of a few polling periods. Signals are coalesced and
// never block Apply; the reconcilers are level-triggered, so a merged
// signal loses nothing.
type notifyingFSM struct {
	*raftfsm.FSM
	wake []chan struct{}
}

var _ raft.FSM = (*notifyingFSM)(nil)

func (f *notifyingFSM) Apply(l *raft.Log) interface{} {
	r := f.FSM.Apply(l)
	for _, ch := range f.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return r
}
