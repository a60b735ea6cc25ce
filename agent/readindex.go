package agent

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/httpapi"
)

// This file serves the read index (etcd's ReadIndex) that keeps a read
// through an agent whose copy of the state is behind from answering "no
// job N" for a job the cluster has (agent/httpapi's readfence.go). The
// leader's applied index, once a quorum confirms it still leads, covers
// every write acknowledged before it was asked: writes of its own term
// were applied before they were answered, and those of earlier terms
// once its term's barrier was (ledTerm).

// ledTerm is the raft term whose barrier this server's leader loop has
// passed: every entry of earlier terms is applied to its FSM. 0 until it
// first leads.
type ledTerm struct{ term atomic.Uint64 }

// barrierTimeout bounds the barrier a read index waits for when it comes
// before the leader loop's own, at the start of a term.
const barrierTimeout = 5 * time.Second

// ReadIndex is the leader's read index: asked of raft here on the
// leader, over the leader's API elsewhere (a follower asks the leader
// raft names, a client agent the one gossip names).
func (b *httpBackend) ReadIndex(ctx context.Context) (uint64, error) {
	r := b.srv.raft()
	var id string
	if r != nil {
		if r.State() == raft.Leader {
			return b.LocalReadIndex(ctx)
		}
		_, rid := r.LeaderWithID()
		id = string(rid)
	} else {
		id, _ = gossipLeader(b.gossip)
	}
	if id == "" {
		return 0, ErrNoLeader
	}
	base, err := b.peers.addrOf(id)
	if err != nil {
		return 0, fmt.Errorf("ask leader %s for its read index: %w", id, err)
	}
	var out api.ReadIndex
	if err := b.peers.client(base).Do(ctx, http.MethodGet, "/v1/read-index", nil, &out); err != nil {
		return 0, fmt.Errorf("ask leader %s for its read index: %w", id, err)
	}
	return out.Index, nil
}

// LocalReadIndex is the read index on the leader: its applied index once
// the voters confirm it still leads (a deposed leader that has not
// noticed fails here), after its term's barrier.
func (b *httpBackend) LocalReadIndex(ctx context.Context) (uint64, error) {
	r := b.srv.raft()
	if r == nil || r.State() != raft.Leader {
		return 0, httpapi.WithStatus(http.StatusConflict, fmt.Errorf("%w: ask the leader for the read index", ErrNotLeader))
	}
	term := r.CurrentTerm()
	if err := awaitFuture(ctx, r.VerifyLeader()); err != nil {
		return 0, fmt.Errorf("confirm leadership for a read index: %w", err)
	}
	if b.led.term.Load() != term {
		// The term is young: entries of earlier terms may be committed
		// and acknowledged but not applied here yet.
		if err := awaitFuture(ctx, r.Barrier(barrierTimeout)); err != nil {
			return 0, fmt.Errorf("apply the earlier terms' entries for a read index: %w", err)
		}
		b.led.term.Store(term)
	}
	return b.fsm.Index(), nil
}
