package agent

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/leader"
)

// leaseBook is the leader's record of the nodes' lease renewals (POST
// /v1/lease), which the leader core reads to tell when a lost node's
// attempts are surely fenced (leader.FenceConfig). It lives on every
// server and counts only while the server leads.
type leaseBook struct {
	mu    sync.Mutex
	heard map[string]leader.Renewal
	// since is when this server last began to lead: renewals an earlier
	// leader answered are counted from here.
	since time.Time
}

// led starts a new term: renewals of earlier terms are forgotten, and
// since counts for them all.
func (b *leaseBook) led(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heard, b.since = map[string]leader.Renewal{}, at
}

func (b *leaseBook) renewed(node string, r leader.Renewal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heard == nil {
		b.heard = map[string]leader.Renewal{}
	}
	b.heard[node] = r
}

// view is a copy of the renewals and the term's start, for one round.
func (b *leaseBook) view() (map[string]leader.Renewal, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.heard), b.since
}

// renewLocal records node's renewal on this server, the leader, once the
// voters confirm it still leads: a deposed leader that has not noticed
// must not extend a lease its successor does not know of. applied is the
// raft index the node's state had applied when it asked, lease the lease
// it runs under. It returns the index of the state this leader had
// applied by then: every failure its decisions were based on is at or
// below it (api.LeaseGrant).
func (a *Agent) renewLocal(ctx context.Context, node string, applied uint64, lease time.Duration) (uint64, error) {
	r := a.srv.raft()
	if r == nil || r.State() != raft.Leader {
		return 0, fmt.Errorf("%w: renew the lease of %s with the leader", ErrNotLeader, node)
	}
	if err := awaitFuture(ctx, r.VerifyLeader()); err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("confirm leadership for the lease of %s: %w", node, err)
		}
		return 0, fmt.Errorf("%w: confirm leadership for the lease of %s: %w", ErrNotLeader, node, err)
	}
	a.leases.renewed(node, leader.Renewal{At: a.clock(), Applied: applied, Lease: lease})
	return a.fsm.Index(), nil
}

// renewLease renews this node's lease with the leader: here when this
// node leads, over the leader's API otherwise. It returns the leader's
// applied index at the renewal (0 from a leader that does not say).
func (a *Agent) renewLease(ctx context.Context) (uint64, error) {
	var id string
	if r := a.srv.raft(); r != nil {
		if r.State() == raft.Leader {
			return a.renewLocal(ctx, a.cfg.Name, a.fsm.Index(), a.cfg.Fence.Lease)
		}
		_, rid := r.LeaderWithID()
		id = string(rid)
	} else {
		id, _ = gossipLeader(a.gossip)
	}
	if id == "" {
		return 0, ErrNoLeader
	}
	base, err := a.peers.addrOf(id)
	if err != nil {
		return 0, err
	}
	var grant api.LeaseGrant
	if err := a.peers.client(base).Do(ctx, "POST", "/v1/lease", api.LeaseRenewal{Node: a.cfg.Name, Applied: a.fsm.Index(), LeaseMS: a.cfg.Fence.Lease.Milliseconds()}, &grant); err != nil {
		return 0, fmt.Errorf("renew the lease with leader %s: %w", id, err)
	}
	return grant.Index, nil
}
