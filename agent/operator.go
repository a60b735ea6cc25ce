package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/httpapi"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/snapfile"
)

// SaveSnapshot takes a consistent copy of the replicated state through
// raft's user snapshot API, on the leader: a barrier first, so that the
// copy holds everything committed before the request.
func (b *httpBackend) SaveSnapshot(ctx context.Context) ([]byte, error) {
	r, err := b.server()
	if err != nil {
		return nil, err
	}
	if err := r.Barrier(b.writeTimeout).Error(); err != nil {
		return nil, fmt.Errorf("snapshot: wait for the committed entries: %w", err)
	}
	var f raft.SnapshotFuture
	for range 3 {
		f = r.Snapshot()
		err := f.Error()
		if err == nil {
			break
		}
		if !errors.Is(err, raft.ErrNothingNewToSnapshot) {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		// Raft has a snapshot at the applied index already and takes
		// none: a barrier moves the index on.
		if err := r.Barrier(b.writeTimeout).Error(); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	meta, rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("snapshot: open: %w", err)
	}
	defer rc.Close()
	payload, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("snapshot: read: %w", err)
	}
	return snapfile.Encode(snapfile.Header{FSMVersion: raftfsm.SnapshotVersion, RaftIndex: meta.Index, RaftTerm: meta.Term,
		TakenAt: b.now().UTC()}, payload)
}

// RestoreSnapshot replaces the replicated state with a checked snapshot
// file's payload through raft's user restore, on the leader: raft keeps
// this cluster's configuration and moves its log past the snapshot, so the
// followers install it too.
func (b *httpBackend) RestoreSnapshot(_ context.Context, h snapfile.Header, payload []byte) error {
	r, err := b.server()
	if err != nil {
		return err
	}
	// No attempt the snapshot shows live is run again under its number,
	// and no number the cluster gave out since is given out again
	// (raftfsm.Restored).
	payload, err = raftfsm.RestoredSnapshot(payload, b.fsm.State(), h.TakenAt, b.now())
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: h.RaftIndex, Term: h.RaftTerm, Size: int64(len(payload))}
	if err := r.Restore(meta, bytes.NewReader(payload), b.writeTimeout); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// RaftPeers is raft's configuration as this node knows it.
// On a client it is the servers' gossip (roles.go).
func (b *httpBackend) RaftPeers() ([]api.RaftPeer, error) {
	r := b.srv.raft()
	if r == nil {
		lead, _ := gossipLeader(b.gossip)
		var out []api.RaftPeer
		for _, e := range b.gossip.Nodes() {
			if ri := e.State.Raft; e.HasState && ri.Member {
				out = append(out, api.RaftPeer{ID: e.State.Name, Address: e.State.RaftAddr(), Voter: ri.Voter, Leader: e.State.Name == lead})
			}
		}
		return out, nil
	}
	f := r.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("raft configuration: %w", err)
	}
	_, leader := r.LeaderWithID()
	var out []api.RaftPeer
	for _, s := range f.Configuration().Servers {
		out = append(out, api.RaftPeer{ID: string(s.ID), Address: string(s.Address), Voter: s.Suffrage == raft.Voter, Leader: s.ID == leader})
	}
	return out, nil
}

// RemovePeer removes a server from raft's configuration, on the leader.
func (b *httpBackend) RemovePeer(_ context.Context, id string) error {
	peers, err := b.RaftPeers()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(peers, func(p api.RaftPeer) bool { return p.ID == id }) {
		return httpapi.WithStatus(404, fmt.Errorf("no raft peer %q (see 'shoal operator raft list-peers')", id))
	}
	r, err := b.server()
	if err != nil {
		return err
	}
	if err := r.RemoveServer(raft.ServerID(id), 0, b.writeTimeout).Error(); err != nil {
		return fmt.Errorf("remove raft peer %s: %w", id, err)
	}
	return nil
}
