package leader

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Schedule is the leader's job reconciler. Each round it reads the whole
// desired state and closes the gaps: fail attempts whose nodes died so
// the job is requeued (and those on a drained node past its deadline),
// release the barrier of attempts every node
// reserved, give up on co-allocations that timed out, place queued jobs,
// and resize elastic jobs. Every command is idempotent, keyed by (job,
// attempt), so a round repeated by a new leader never launches anything
// twice.
func Schedule(v View, b JobsBook) ([]Command, JobsBook) {
	st, now := v.State, v.Now
	status := map[string]nodestate.Status{}
	for _, n := range v.Nodes {
		status[n.Name] = n.Status
	}
	var cmds []Command
	for _, id := range st.SortedJobIDs() {
		j := st.Jobs[id]
		att := j.Current()
		if att == nil || !j.State.Live() {
			continue
		}
		if dead := deadHosts(att, status); len(dead) > 0 {
			// A lost node may only be stalled, its attempt's processes
			// alive: the retry waits until its lease has lapsed there
			// and its guard has frozen them.
			if lapse := leaseLapse(v, dead); now.Before(lapse) {
				continue
			}
			cmds = append(cmds, Command{Type: raftfsm.CmdFailAttempt, Body: raftfsm.FailAttempt{ID: j.ID, Attempt: att.N,
				Reason: fmt.Sprintf("node %s died under attempt %d", dead[0], att.N), Retry: true, Lost: dead}})
			continue
		}
		if node, d := expiredDrain(st, att, now); node != "" {
			// Not Lost: placement already keeps the retry off a drained
			// node, and once undrained the node is fit again (a job pinned
			// to it by its hostfile runs there).
			cmds = append(cmds, Command{Type: raftfsm.CmdFailAttempt, Body: raftfsm.FailAttempt{ID: j.ID, Attempt: att.N,
				Reason: fmt.Sprintf("node %s drained: its deadline %s passed under attempt %d", node, d.Deadline.Format(time.RFC3339), att.N),
				Retry:  true},
				Before: note("drain deadline passed: requeueing", "job", j.ID, "attempt", att.N, "node", node)})
			continue
		}
		if j.State != raftfsm.StateLaunching {
			continue
		}
		if att.AllAcked() {
			cmds = append(cmds, Command{Type: raftfsm.CmdStartJob, Body: raftfsm.StartJob{ID: j.ID, Attempt: att.N}})
			continue
		}
		if !att.PlacedAt.IsZero() && now.Sub(att.PlacedAt) > v.Config.CoallocTimeout {
			cmds = append(cmds, Command{Type: raftfsm.CmdFailAttempt, Body: raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Retry: true,
				Reason: fmt.Sprintf("co-allocation timed out after %v: %v did not reserve", v.Config.CoallocTimeout, att.Pending())}})
		}
	}
	placed, next := placeQueued(v, b)
	cmds = append(cmds, placed...)
	cmds = append(cmds, decideElastic(v)...)
	return cmds, next
}

// deadHosts lists the hosts of att that gossip has dead, gone or never
// heard of, in the attempt's order.
func deadHosts(att *raftfsm.Attempt, status map[string]nodestate.Status) []string {
	var out []string
	for _, h := range att.Hosts {
		if s := status[h.Node]; s == nodestate.StatusDead || s == nodestate.StatusLeft || s == "" {
			out = append(out, h.Node)
		}
	}
	return out
}

// expiredDrain returns the first host of att whose drain deadline has
// passed at now, as a node loss: the attempt is failed with retry and
// the job runs elsewhere.
func expiredDrain(st *raftfsm.State, att *raftfsm.Attempt, now time.Time) (string, raftfsm.Drain) {
	for _, h := range att.Hosts {
		if d, ok := st.Drained(h.Node); ok && d.Expired(now) {
			return h.Node, d
		}
	}
	return "", raftfsm.Drain{}
}

// drainedHost returns the first host of j's hostfile that is drained.
func drainedHost(st *raftfsm.State, j *raftfsm.Job) string {
	for _, h := range j.Spec.Hostfile {
		if _, ok := st.Drained(h.Host); ok {
			return h.Host
		}
	}
	return ""
}

// placeQueued places queued jobs in queue order (priority, then the
// owner's fair-share factor, then first come)
// on one snapshot, adding each placement's slots to it before the next, so
// one round never hands the same free slots to two jobs. Its commands are
// marked Placement: each was decided assuming the placements before it
// commit, so when one is not taken the agent skips the rest and the next
// round decides them again from raft's state.
func placeQueued(v View, b JobsBook) ([]Command, JobsBook) {
	st, now := v.State, v.Now
	queue := raftfsm.FairQueue(st, now, v.Config.FairShareHalfLife)
	next := JobsBook{Refused: maps.Clone(b.Refused)}
	maps.DeleteFunc(next.Refused, func(id uint64, r Refusal) bool {
		j := st.Jobs[id]
		return j == nil || j.State != raftfsm.StateQueued || r.Attempt != j.Attempt+1
	})
	if len(queue) == 0 {
		return nil, next
	}
	var cmds []Command
	add := func(typ string, body any) {
		cmds = append(cmds, Command{Type: typ, Body: body, Placement: true})
	}
	snap := Snapshot(st, v.Nodes, now)
	gs := newGates(st, now)
	mg := &modelGate{v: v}
	heldMem, confined := raftfsm.HeldMemory(st), confinedNodes(v.Nodes)
	for _, j := range queue {
		if g := gs.check(j); g.never != "" {
			add(raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: g.never})
			continue
		} else if g.wait != "" {
			if waitReasonStale(j.WaitReason, j.WaitSince, g.wait, now) {
				add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: g.wait})
			}
			continue
		}
		if wait := mg.wait(j); wait != "" {
			// As Slurm keeps a job pending with a reason: a network-aware
			// placement on a model that covers a few nodes is a guess.
			if waitReasonStale(j.WaitReason, j.WaitSince, wait, now) {
				add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: wait})
			}
			continue
		}
		if wait := unfencedLost(v, j); wait != "" {
			if waitReasonStale(j.WaitReason, j.WaitSince, wait, now) {
				add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: wait})
			}
			continue
		}
		if r, ok := next.Refused[j.ID]; ok {
			// One job refused must not hold up the jobs behind it: raft
			// would refuse the same allocation every round, so the job
			// fails with the reason.
			delete(next.Refused, j.ID)
			add(raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "cannot place: the allocation was refused: " + r.Err})
			continue
		}
		req, why := placementRequest(j, st.Settings), ""
		if j.Elastic != nil && j.Spec.Elastic != nil {
			// An elastic job starts on its target, or on what is free (at least its minimum):
			// a job that lost a node resumes on the nodes that are left rather than waiting.
			req.N, why = elasticPlacement(excludeFailed(snap, j), j)
			if j.Spec.Elastic.CommHeavy {
				req.Alpha = min(req.Alpha, 0.1) // seed 004: better-connected nodes, not more of them
			}
		}
		req.Done = v.Done // the agent stopping or leadership lost ends a long placement
		place := excludeFailed(snap, j)
		if p, ok := st.PartitionOf(j); ok {
			place = inPartition(place, p)
			if p.LoadThreshold > 0 {
				req.LoadThreshold = p.LoadThreshold
			}
		}
		if c, _ := raftfsm.ParseConstraint(j.Spec.Constraint); len(c) > 0 {
			var fit int
			if place, fit = withFeatures(place, v.Nodes, c); fit == 0 {
				// As Slurm keeps a job pending whose features no usable node offers.
				if r := "ReqNodeNotAvail: no usable node has the features " + j.Spec.Constraint; waitReasonStale(j.WaitReason, j.WaitSince, r, now) {
					add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: r})
				}
				continue
			}
		}
		if j.Spec.HasMem() {
			var wait string
			if place, wait = memoryFit(place, confined, heldMem, j); wait != "" {
				if j.Spec.Immediate {
					add(raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "immediate job cannot start now: " + wait})
				} else if waitReasonStale(j.WaitReason, j.WaitSince, wait, now) {
					add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: wait})
				}
				continue
			}
		}
		d, err := placement.Place(place, req)
		if errors.Is(err, placement.ErrCanceled) {
			return cmds, next
		}
		if err != nil && errors.Is(err, placement.ErrDeadHost) {
			if n := drainedHost(st, j); n != "" {
				// As Slurm keeps a job that asks for a drained node pending:
				// the drain ends, the node does not die.
				if r := fmt.Sprintf("hostfile names node %s, which is drained", n); waitReasonStale(j.WaitReason, j.WaitSince, r, now) {
					add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: r})
				}
				continue
			}
		}
		if err != nil {
			add(raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "cannot place: " + err.Error()})
			continue
		}
		if d.Wait {
			if j.Spec.Immediate {
				add(raftfsm.CmdRejectJob, raftfsm.RejectJob{ID: j.ID, Reason: "immediate job cannot start now: " + d.WaitReason})
			} else if waitReasonStale(j.WaitReason, j.WaitSince, d.WaitReason, now) {
				add(raftfsm.CmdSetWaitReason, raftfsm.SetWaitReason{ID: j.ID, Reason: d.WaitReason})
			}
			continue
		}
		// A copy: the refusal below edits the stored hosts, not the
		// decision whose hosts are held on the snapshot.
		hosts := slices.Clone(d.Hosts)
		if v.Config.RefusePlacement != nil && v.Config.RefusePlacement(j) {
			hosts[0].NP = 0 // an allocation raft's validation refuses, as a placement bug would make
		}
		add(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: j.ID, Attempt: j.Attempt + 1, Hosts: hosts,
			Degraded: d.Degraded, DegradedReason: d.DegradedReason, Reason: why})
		cmds[len(cmds)-1].Explain = &d.Score
		gs.placed(j)
		holdMemory(heldMem, &j.Spec, hosts)
		for _, h := range d.Hosts {
			for i := range snap.Nodes {
				if snap.Nodes[i].Name == h.Node {
					snap.Nodes[i].HeldSlots += h.NP * j.Spec.CPUs() // cores, as raftfsm.HeldSlots counts them
				}
			}
		}
	}
	return cmds, next
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
	refresh := waitRefresh
	if kind(now) == ModelWaitReason {
		refresh = modelWaitRefresh
	}
	return kind(old) != kind(now) || at.Sub(since) >= refresh
}

// modelWaitRefresh is waitRefresh for a job waiting for the network model:
// that wait lasts seconds (PlacementModelWait), and a user watching
// `shoal run` should see the count of measured nodes move.
const modelWaitRefresh = 5 * time.Second

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
