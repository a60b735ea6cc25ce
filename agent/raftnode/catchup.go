package raftnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// floorFSM lets a client that becomes a server keep the state it
// followed (agent/replica) instead of starting over from an empty one.
// Its FSM already holds every entry up to floor, exactly as raft applied
// them on the servers, so raft's replay of those entries to the new
// server is skipped, and so is a snapshot taken at or below floor (the
// state would go back in time, and the job reconciler with it: an older
// state must never kill the jobs a newer one runs). Past floor it passes
// everything through.
//
// Raft calls Apply, Restore and Snapshot from its FSM goroutine, one at a
// time, so seen needs no lock.
type floorFSM struct {
	next  raft.FSM
	floor uint64
	// seen is the highest index raft has handed over (applied or
	// restored), skipped or not.
	seen uint64
}

var _ raft.FSM = (*floorFSM)(nil)

func (f *floorFSM) Apply(l *raft.Log) interface{} {
	f.seen = max(f.seen, l.Index)
	if l.Index <= f.floor {
		return nil
	}
	return f.next.Apply(l)
}

// Snapshot refuses while raft is below floor: raft would label the state
// at floor with its own lower index, and a restart would apply the
// entries between them twice. Raft retries at its next snapshot interval.
func (f *floorFSM) Snapshot() (raft.FSMSnapshot, error) {
	if f.seen < f.floor {
		return nil, fmt.Errorf("%w: raft at %d, the followed state at %d", errCatchingUp, f.seen, f.floor)
	}
	return f.next.Snapshot()
}

func (f *floorFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("restore: read snapshot: %w", err)
	}
	index, err := raftfsm.SnapshotIndex(data)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	f.seen = max(f.seen, index)
	if index <= f.floor {
		return nil
	}
	return f.next.Restore(io.NopCloser(bytes.NewReader(data)))
}

var errCatchingUp = errors.New("no snapshot while catching up with the followed state")

// HasState reports whether dir holds raft state (its log store), which
// makes the agent a server at start: it was one before it stopped.
func HasState(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "raft.db"))
	return err == nil
}
