package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// scheduleJobs is the leader's job reconciler. Each round it reads the
// whole desired state and closes the gaps: place queued jobs, release the
// barrier of attempts every node reserved, give up on co-allocations that
// timed out, and fail attempts whose nodes died so the job is requeued.
// Every write is an idempotent raft command keyed by (job, attempt), so a
// round repeated by a new leader never launches anything twice.
func (a *Agent) scheduleJobs(ctx context.Context) {
	st := a.fsm.State()
	now := time.Now()
	status := map[string]gossip.Status{}
	for _, e := range a.gossip.Nodes() {
		status[e.State.Name] = e.Status
	}
	for _, id := range st.SortedJobIDs() {
		j := st.Jobs[id]
		att := j.Current()
		if att == nil || !j.State.Live() {
			continue
		}
		if dead := deadHost(att, status); dead != "" {
			a.propose(ctx, raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N,
				Reason: fmt.Sprintf("node %s died under attempt %d", dead, att.N), Retry: true, Lost: []string{dead}})
			continue
		}
		if j.State != raftfsm.StateLaunching {
			continue
		}
		if att.AllAcked() {
			a.propose(ctx, raftfsm.CmdStartJob, raftfsm.StartJob{ID: j.ID, Attempt: att.N})
			continue
		}
		if !att.PlacedAt.IsZero() && now.Sub(att.PlacedAt) > a.cfg.CoallocTimeout {
			a.propose(ctx, raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Retry: true,
				Reason: fmt.Sprintf("co-allocation timed out after %v: %v did not reserve", a.cfg.CoallocTimeout, att.Pending())})
		}
	}
	a.placeQueued(ctx, st, now)
	a.decideElastic(ctx, st, now)
}

func deadHost(att *raftfsm.Attempt, status map[string]gossip.Status) string {
	for _, h := range att.Hosts {
		if s := status[h.Node]; s == gossip.StatusDead || s == gossip.StatusLeft || s == "" {
			return h.Node
		}
	}
	return ""
}

// placeQueued places queued jobs in queue order (priority, then first come)
// on one snapshot, adding each placement's slots to it before the next, so
// one round never hands the same free slots to two jobs.
func (a *Agent) placeQueued(ctx context.Context, st *raftfsm.State, now time.Time) {
	queue := raftfsm.Queue(st)
	if len(queue) == 0 {
		return
	}
	snap := a.placementSnapshot(st)
	for _, j := range queue {
		req, why := placementRequest(j, st.Settings), ""
		if j.Elastic != nil && j.Spec.Elastic != nil {
			// An elastic job starts on its target, or on what is free (at least its minimum):
			// a job that lost a node resumes on the nodes that are left rather than waiting.
			req.N, why = elasticPlacement(excludeFailed(snap, j), j)
			if j.Spec.Elastic.CommHeavy {
				req.Alpha = min(req.Alpha, 0.1) // seed 004: better-connected nodes, not more of them
			}
		}
		req.Done = ctx.Done() // the agent stopping or leadership lost ends a long placement
		d, err := placement.Place(excludeFailed(snap, j), req)
		if errors.Is(err, placement.ErrCanceled) {
			return
		}
		if err != nil {
			a.propose(ctx, raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "cannot place: " + err.Error()})
			continue
		}
		if d.Wait {
			if j.Spec.Immediate {
				a.propose(ctx, raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "immediate job cannot start now: " + d.WaitReason})
			} else if waitReasonStale(j.WaitReason, j.WaitSince, d.WaitReason, now) {
				a.propose(ctx, raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: d.WaitReason})
			}
			continue
		}
		hosts := make([]raftfsm.Host, len(d.Hosts))
		for i, h := range d.Hosts {
			hosts[i] = raftfsm.Host{Node: h.Node, Procs: h.Procs}
		}
		if a.cfg.Testing.RefusePlacement != nil && a.cfg.Testing.RefusePlacement(j) {
			hosts[0].Procs = 0 // an allocation raft's validation refuses, as a placement bug would make
		}
		res, err := a.proposeResult(ctx, raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: j.ID, Attempt: j.Attempt + 1, Hosts: hosts,
			Degraded: d.Degraded, DegradedReason: d.DegradedReason, Reason: why})
		if err != nil {
			return // no longer the leader, or raft is down: the next leader's round takes over
		}
		if res.Err != "" {
			// One job refused must not hold up the jobs behind it. A refusal raft will repeat
			// every round (the allocation breaks its bounds) fails the job with the reason; any
			// other (the job changed under this round) is retried next round.
			a.log.Warn("placement refused by raft", "job", j.ID, "code", res.Code, "err", res.Err)
			if deterministicRefusal(res.Code) {
				a.propose(ctx, raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "cannot place: the allocation was refused: " + res.Err})
			}
			continue
		}
		for _, h := range d.Hosts {
			for i := range snap.Nodes {
				if snap.Nodes[i].Name == h.Node {
					snap.Nodes[i].HeldSlots += h.Procs
				}
			}
		}
	}
}

// propose commits one command from the leader and logs what raft refused.
// Refusals of stale or repeated commands are expected after a leader change.
func (a *Agent) propose(ctx context.Context, typ string, body any) bool {
	res, err := a.proposeResult(ctx, typ, body)
	return err == nil && res.Err == ""
}

// proposeResult commits one command from the leader. The error is raft's
// (not the leader, timeout); a command the FSM refused comes back in
// res.Err and res.Code.
func (a *Agent) proposeResult(ctx context.Context, typ string, body any) (api.ApplyResult, error) {
	b, err := raftfsm.Encode(typ, time.Now(), body)
	if err != nil {
		a.log.Error("encode command", "type", typ, "err", err)
		return api.ApplyResult{}, err
	}
	res, err := a.applyLocal(ctx, b)
	if err != nil {
		a.log.Warn("propose", "type", typ, "err", err)
		return res, err
	}
	if res.Err != "" {
		a.log.Debug("command refused", "type", typ, "err", res.Err)
		return res, nil
	}
	a.log.Info("committed", "type", typ, "job", res.JobID)
	return res, nil
}

// deterministicRefusal reports whether the FSM refused a command for its
// content, so proposing it again would be refused again: the command, not
// the moment, is wrong.
func deterministicRefusal(code string) bool {
	return code == raftfsm.Code(raftfsm.ErrInvalid) || code == raftfsm.Code(raftfsm.ErrMalformed)
}

// waitRefresh is how long a job's recorded wait reason may lag behind the
// leader's when only its figures changed (the least-loaded node's load, the
// free slots): often enough to read true, rarely enough that a queue of
// waiting jobs does not write raft on every sample.
const waitRefresh = 30 * time.Second

// waitReasonStale decides whether the leader writes a waiting job's new
// reason to raft: at once when the kind of reason changed (the words before
// the first colon: "cluster overloaded", "not enough free slots", ...), after
// waitRefresh when only its figures did, never when it is the same.
func waitReasonStale(old string, since time.Time, now string, at time.Time) bool {
	if old == now {
		return false
	}
	kind := func(s string) string { k, _, _ := strings.Cut(s, ":"); return k }
	return kind(old) != kind(now) || at.Sub(since) >= waitRefresh
}

// excludeFailed hides from one job the nodes its last attempt failed on:
// nodes that never reserved (a hung agent would be chosen again and again
// until the job runs out of attempts) and nodes the attempt lost (gossip may
// take seconds to declare them dead, and the retry must not wait for that).
func excludeFailed(snap placement.Snapshot, j *raftfsm.Job) placement.Snapshot {
	if len(j.Attempts) == 0 {
		return snap
	}
	last := j.Attempts[len(j.Attempts)-1]
	if last.State != raftfsm.StateFailed {
		return snap
	}
	avoid := slices.Clone(last.Lost)
	if last.StartedAt.IsZero() {
		avoid = append(avoid, last.Pending()...)
	}
	if len(avoid) == 0 {
		return snap
	}
	out := snap
	out.Nodes = slices.Clone(snap.Nodes)
	for i := range out.Nodes {
		if slices.Contains(avoid, out.Nodes[i].Name) {
			out.Nodes[i].Alive = false
		}
	}
	return out
}
