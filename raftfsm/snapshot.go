package raftfsm

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// snapshotVersion is the version of the snapshot envelope.
const snapshotVersion = 1

// envelope is the snapshot format: canonical JSON, so that equal states give equal bytes.
type envelope struct {
	V     int    `json:"v"`
	Index uint64 `json:"index"`
	State *State `json:"state"`
}

// fsmSnapshot is a deep copy taken under the lock; Persist encodes it while Apply goes on.
type fsmSnapshot struct {
	index uint64
	state *State
}

// Snapshot copies the state; the encoding and the I/O happen in Persist.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return &fsmSnapshot{index: f.index, state: f.state.Clone()}, nil
}

// Bytes returns the canonical snapshot encoding of the FSM, as Persist would write it.
func (f *FSM) Bytes() ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return encodeSnapshot(f.index, f.state)
}

// SnapshotBytes is Bytes with the index the snapshot was taken at
// (agent/replica streams both to clients). Like Snapshot, it copies the
// state under the lock and encodes it outside, so Apply waits only for
// the copy.
func (f *FSM) SnapshotBytes() ([]byte, uint64, error) {
	f.mu.RLock()
	index, st := f.index, f.state.Clone()
	f.mu.RUnlock()
	b, err := encodeSnapshot(index, st)
	return b, index, err
}

func encodeSnapshot(index uint64, s *State) ([]byte, error) {
	b, err := json.Marshal(envelope{V: snapshotVersion, Index: index, State: s})
	if err != nil {
		return nil, fmt.Errorf("encode snapshot at %d: %w", index, err)
	}
	return b, nil
}

// Persist writes the snapshot to sink and closes it, or cancels it on error.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	b, err := encodeSnapshot(s.index, s.state)
	if err == nil {
		_, err = sink.Write(b)
	}
	if err != nil {
		_ = sink.Cancel() // the write error is the one worth reporting
		return fmt.Errorf("persist snapshot %s: %w", sink.ID(), err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("close snapshot %s: %w", sink.ID(), err)
	}
	return nil
}

// Release does nothing: the snapshot holds only memory.
func (s *fsmSnapshot) Release() {}

// Restore replaces the whole state with the snapshot's. On error the state is left as it was.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("restore: read snapshot: %w", err)
	}
	index, st, err := decodeSnapshot(data)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state, f.index = st, index
	f.wake()
	return nil
}

func decodeSnapshot(data []byte) (uint64, *State, error) {
	var env envelope
	if err := strictUnmarshal(data, &env); err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	if env.V != snapshotVersion {
		return 0, nil, fmt.Errorf("%w: version %d, want %d", ErrBadSnapshot, env.V, snapshotVersion)
	}
	if env.State == nil {
		return 0, nil, fmt.Errorf("%w: no state", ErrBadSnapshot)
	}
	return env.Index, env.State, nil
}

// SnapshotVersion is the version of the snapshot encoding Persist writes and Restore reads.
const SnapshotVersion = snapshotVersion

// SnapshotIndex decodes a snapshot as Restore would, without restoring it, and returns the
// index it was taken at: raft's own restore path reads it. Errors wrap ErrBadSnapshot.
func SnapshotIndex(data []byte) (uint64, error) {
	index, _, err := decodeSnapshot(data)
	return index, err
}

// CheckSnapshot decodes a snapshot as Restore would, without restoring it, and returns the
// index it was taken at: a backup is refused before anything changes. Errors wrap ErrBadSnapshot.
//
// Beyond what Restore checks, every job's spec must pass today's submit rules (checkSpecs).
func CheckSnapshot(data []byte) (uint64, error) {
	index, st, err := decodeSnapshot(data)
	if err != nil {
		return 0, err
	}
	if err := checkSpecs(st); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	return index, nil
}
