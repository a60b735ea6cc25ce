package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// maxApplyBackoff caps the wait between a write's retries while there is
// no leader to take it.
const maxApplyBackoff = 50 * time.Millisecond

// applier commits raft commands from this node: into raft on the leader,
// forwarded to the leader's API elsewhere. The HTTP API, the job node,
// the leader loops and the progress reporter share it.
type applier struct {
	// srv is the agent's raft, nil on a client; gossip tells a client
	// which server leads.
	srv    *serverRef
	gossip *gossip.Gossip
	fsm    *raftfsm.FSM
	peers  *peers
	// writeTimeout bounds how long a write waits for a leader (Config.WriteTimeout).
	writeTimeout time.Duration
}

// Apply commits an encoded raftfsm command, from any node: on the leader it
// goes straight into raft, elsewhere it is forwarded to the leader's API.
// While there is no leader it waits, retrying, until ctx or WriteTimeout
// ends. Commands are idempotent, so retrying after an unknown outcome
// (raft.ErrLeadershipLost, a forward that timed out) is safe.
func (a *applier) Apply(ctx context.Context, cmd []byte) (api.ApplyResult, error) {
	if _, err := raftfsm.Decode(cmd); err != nil {
		return api.ApplyResult{}, fmt.Errorf("refused command: %w", err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, a.writeTimeout)
	defer cancel()
	// Retries are cheap (a refused connection to a dead leader, or a
	// follower's answer that it does not lead) and the wait between them
	// adds to every failover: the first write after a leader dies waits
	// out the election plus up to one backoff, so the cap is a fraction
	// of the election itself.
	backoff := 10 * time.Millisecond
	var last error
	for {
		res, err := a.applyOnce(ctx, cmd)
		if err == nil {
			a.awaitApplied(ctx, res.Index)
			return res, nil
		}
		var se *api.StatusError
		if errors.As(err, &se) && se.Code/100 == 4 {
			return api.ApplyResult{}, err // the leader judged the command itself: do not retry
		}
		last = err
		select {
		case <-ctx.Done():
			// The caller's deadline (the request's, within its
			// timeout) may end the wait before WriteTimeout does.
			return api.ApplyResult{}, fmt.Errorf("%w: a write waited %v (last: %v); is a quorum of voters up? see 'shoal members'",
				ErrNoLeader, time.Since(start).Round(time.Millisecond), last)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxApplyBackoff)
	}
}

// awaitApplied waits, until ctx ends, for this node's copy of the state to
// hold the entry at index. A write forwarded to the leader is committed
// there before this node has applied it; without the wait, a user who
// submits through one agent and asks the same agent at once would be told
// the job does not exist (read-your-writes on the agent you talk to).
//
// It wakes as each entry is applied here (FSM.Changed), not on a timer: a
// host's acknowledgement and the submit of `shoal run` pass through here,
// and each millisecond of a poll is a millisecond of every launch.
func (a *applier) awaitApplied(ctx context.Context, index uint64) {
	for {
		changed := a.fsm.Changed() // before the check: an entry applied between the two still wakes us
		if index == 0 || a.fsm.Index() >= index {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

func (a *applier) applyOnce(ctx context.Context, cmd []byte) (api.ApplyResult, error) {
	var id string
	if r := a.srv.raft(); r != nil {
		if r.State() == raft.Leader {
			return a.applyLocal(ctx, cmd)
		}
		_, rid := r.LeaderWithID()
		id = string(rid)
	} else {
		id, _ = gossipLeader(a.gossip)
	}
	if id == "" {
		return api.ApplyResult{}, ErrNoLeader
	}
	base, err := a.peers.addrOf(id)
	if err != nil {
		return api.ApplyResult{}, err
	}
	c := a.peers.client(base)
	var res api.ApplyResult
	err = c.Do(ctx, "POST", "/v1/apply?forwarded=1", cmd, &res)
	return res, err
}

func (a *applier) applyLocal(ctx context.Context, cmd []byte) (api.ApplyResult, error) {
	r := a.srv.raft()
	if r == nil {
		return api.ApplyResult{}, fmt.Errorf("%w: this agent is a client", ErrNotLeader)
	}
	timeout := time.Until(deadlineOr(ctx, 5*time.Second))
	f := r.Apply(cmd, timeout)
	// raft's timeout bounds only the enqueueing: once enqueued, the future
	// waits for the commit, which a leader that has lost its followers may
	// never make. Waiting past ctx deadlocked shutdown (the leader loop
	// waited here, and raft stepping down waited for the leader loop), so
	// the caller's cancellation wins; the entry may still commit, as after
	// any timeout, and callers retry by request ID.
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return api.ApplyResult{}, fmt.Errorf("raft apply: %w", ctx.Err())
	}
	if err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return api.ApplyResult{}, fmt.Errorf("%w: %w", ErrNotLeader, err)
		}
		return api.ApplyResult{}, fmt.Errorf("raft apply: %w", err)
	}
	res := api.ApplyResult{Index: f.Index()}
	if r, ok := f.Response().(raftfsm.Result); ok {
		res = applyResult(r, f.Index())
	}
	return res, nil
}

// applyResult is the FSM's answer to the entry at index as the API
// carries it, a batch's with one answer per command applied.
func applyResult(r raftfsm.Result, index uint64) api.ApplyResult {
	res := api.ApplyResult{Index: index, JobID: r.JobID, JobIDs: r.JobIDs}
	if r.Err != nil {
		res.Err, res.Code = r.Err.Error(), raftfsm.Code(r.Err)
	}
	for _, sub := range r.Results {
		c := api.CommandResult{JobID: sub.JobID, JobIDs: sub.JobIDs}
		if sub.Err != nil {
			c.Err, c.Code = sub.Err.Error(), raftfsm.Code(sub.Err)
		}
		res.Results = append(res.Results, c)
	}
	return res
}

func deadlineOr(ctx context.Context, d time.Duration) time.Time {
	if dl, ok := ctx.Deadline(); ok {
		return dl
	}
	return time.Now().Add(d)
}
