package leader

import (
	"fmt"
	"math"
	"time"

	"github.com/shoal-hpc/shoal/elastic"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// spareNodes counts the alive nodes outside hold (with reported cores) that an elastic job
// could grow onto now: free ones, with at least unit slots free, and busy ones, without; a job
// submitted with --force may use the busy ones too.
func spareNodes(snap placement.Snapshot, unit int, hold *raftfsm.Attempt) (free, busy int) {
	for _, nd := range snap.Nodes {
		if !nd.Alive || (hold != nil && hold.Holds(nd.Name)) {
			continue
		}
		cores := nd.Threads
		if cores == 0 {
			cores = nd.Cores
		}
		switch {
		case cores == 0:
		case cores-int(math.Ceil(nd.Load.M1))-nd.HeldSlots >= unit:
			free++
		default:
			busy++
		}
	}
	return free, busy
}

// SpentNodeHours sums, over the job's attempts that ran, nodes x running time.
func SpentNodeHours(j *raftfsm.Job, now time.Time) float64 {
	var nh float64
	for _, at := range j.Attempts {
		if at.StartedAt.IsZero() {
			continue
		}
		end := at.EndedAt
		if end.IsZero() {
			end = now
		}
		nh += float64(len(at.Hosts)) * end.Sub(at.StartedAt).Hours()
	}
	return nh
}

// RestartCost is the mean of the job's measured restart costs, 0 when none was measured.
func RestartCost(e *raftfsm.ElasticStatus) time.Duration {
	if len(e.RestartCosts) == 0 {
		return 0
	}
	var sum time.Duration
	for _, c := range e.RestartCosts {
		sum += c
	}
	return sum / time.Duration(len(e.RestartCosts))
}

// ElasticInput turns a running elastic job into the decision layer's input; snap is what the
// cluster has now.
func ElasticInput(j *raftfsm.Job, att *raftfsm.Attempt, now time.Time, snap placement.Snapshot) elastic.Input {
	sp, e, unit := j.Spec.Elastic, j.Elastic, j.Spec.Unit()
	free, busy := spareNodes(snap, unit*j.Spec.CPUs(), att)
	in := elastic.Input{
		Now: now, BudgetNH: sp.BudgetNH, SpentNH: SpentNodeHours(j, now), Iterations: sp.Iterations,
		Current: att.NP() / unit, Min: sp.MinNP / unit, Max: sp.MaxNP / unit, Free: free, Busy: busy, Force: j.Spec.Force,
		RestartCost: RestartCost(e), CommHeavy: sp.CommHeavy,
	}
	if sp.Deadline > 0 {
		in.Deadline = j.SubmittedAt.Add(sp.Deadline)
	}
	if p := att.Progress; p != nil {
		in.Done, in.CommShare = p.Iter, p.Comm
		in.Window, in.WindowIters = p.At.Sub(p.FirstAt), p.Iter-p.FirstIter
		if in.WindowIters > 0 {
			in.SecPerIter = in.Window.Seconds() / float64(in.WindowIters)
		}
	}
	if n := len(e.History); n > 0 {
		last := e.History[n-1]
		in.LastResize, in.Grown = last.At, last.ToNP > last.FromNP
	}
	return in
}

// decideElastic is the leader's decision round: every running elastic job that is not already
// resizing gets a decision, and a resize is committed as resize_job (the nodes then signal).
func decideElastic(v View) []Command {
	var snap *placement.Snapshot
	var cmds []Command
	st := v.State
	for _, id := range st.SortedJobIDs() {
		j := st.Jobs[id]
		att := j.Current()
		if j.Elastic == nil || j.Spec.Elastic == nil || j.State != raftfsm.StateRunning || att == nil || j.Elastic.ResizeAttempt == att.N {
			continue
		}
		if snap == nil {
			s := Snapshot(st, v.Nodes, v.Now)
			snap = &s
		}
		d := elastic.Decide(v.Config.Elastic, ElasticInput(j, att, v.Now, *snap))
		if !d.Resize {
			continue
		}
		target := d.Target * j.Spec.Unit()
		cmds = append(cmds, Command{Type: raftfsm.CmdResizeJob, Body: raftfsm.ResizeJob{ID: j.ID, Attempt: att.N, TargetNP: target, Reason: d.Reason},
			Before: note("resizing elastic job", "job", j.ID, "attempt", att.N, "from", att.NP(), "to", target, "reason", d.Reason)})
	}
	return cmds
}

// elasticPlacement picks the process count of an elastic job's next attempt: its target, less
// what is not free, but at least its minimum; the reason is set when it is not the target. A
// job submitted with --force counts busy nodes as free, as its placement does.
func elasticPlacement(snap placement.Snapshot, j *raftfsm.Job) (int, string) {
	sp, unit, target := j.Spec.Elastic, j.Spec.Unit(), j.Elastic.TargetNP
	free, busy := spareNodes(snap, unit*j.Spec.CPUs(), nil)
	if j.Spec.Force {
		free += busy
	}
	np := max(sp.MinNP, min(target, free*unit))
	if np == target {
		return np, ""
	}
	why := fmt.Sprintf("only %d nodes free: placed on %d of the target %d processes", free, np, target)
	if n := len(j.Attempts); n > 0 && j.Attempts[n-1].State == raftfsm.StateFailed {
		last := j.Attempts[n-1]
		why = fmt.Sprintf("attempt %d failed (%s): resumed from the checkpoint on %d of %d processes", last.N, last.Reason, np, target)
	}
	return np, why
}
