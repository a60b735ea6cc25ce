package agent

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/elastic"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// ElasticOptions tune elastic jobs (issue 8) on one agent.
type ElasticOptions struct {
	// Decision is the decision layer's configuration (elastic.DefaultConfig()).
	Decision elastic.Config
	// ProgressEvery is the least time between two progress reports of one attempt that this
	// agent commits to raft; reports in between are answered but not committed. Default 1s.
	ProgressEvery time.Duration
	// SignalEvery is how often SIGUSR1 is sent again to an attempt asked to resize that has not
	// exited yet (a process may not have installed its handler the first time). Default 5s.
	SignalEvery time.Duration
	// NoProgressAfter is how long an attempt may run without reporting progress before
	// `shoal job` says it runs as a fixed-size job. Default 30s.
	NoProgressAfter time.Duration
}

// DefaultElasticOptions returns the defaults documented on each field.
func DefaultElasticOptions() ElasticOptions {
	return ElasticOptions{Decision: elastic.DefaultConfig(), ProgressEvery: time.Second,
		SignalEvery: 5 * time.Second, NoProgressAfter: 30 * time.Second}
}

// Validate names the first field out of bounds.
func (o ElasticOptions) Validate() error {
	if err := o.Decision.Validate(); err != nil {
		return fmt.Errorf("elastic decision: %w", err)
	}
	if o.ProgressEvery < 0 || o.SignalEvery <= 0 || o.NoProgressAfter <= 0 {
		return fmt.Errorf("elastic options: ProgressEvery must be >= 0, SignalEvery and NoProgressAfter > 0 (got %v, %v, %v)",
			o.ProgressEvery, o.SignalEvery, o.NoProgressAfter)
	}
	return nil
}

// elasticState is the node-local bookkeeping of elastic jobs.
type elasticState struct {
	mu       sync.Mutex
	opts     *ElasticOptions
	reported map[jobKey]progressMark // the last progress committed per attempt
}

type progressMark struct {
	at   time.Time
	iter int64
}

// SetElasticOptions replaces the elastic options of this agent (tests shorten the windows).
func (a *Agent) SetElasticOptions(o ElasticOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	a.jobs.el.mu.Lock()
	defer a.jobs.el.mu.Unlock()
	a.jobs.el.opts = &o
	return nil
}

func (a *Agent) elasticOptions() ElasticOptions {
	a.jobs.el.mu.Lock()
	defer a.jobs.el.mu.Unlock()
	if a.jobs.el.opts == nil {
		return DefaultElasticOptions()
	}
	return *a.jobs.el.opts
}

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

// spentNodeHours sums, over the job's attempts that ran, nodes x running time.
func spentNodeHours(j *raftfsm.Job, now time.Time) float64 {
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

func restartCost(e *raftfsm.ElasticStatus) time.Duration {
	if len(e.RestartCosts) == 0 {
		return 0
	}
	var sum time.Duration
	for _, c := range e.RestartCosts {
		sum += c
	}
	return sum / time.Duration(len(e.RestartCosts))
}

// elasticInput turns a running elastic job into the decision layer's input; snap is what the
// cluster has now.
func elasticInput(j *raftfsm.Job, att *raftfsm.Attempt, now time.Time, snap placement.Snapshot) elastic.Input {
	sp, e, unit := j.Spec.Elastic, j.Elastic, j.Spec.Unit()
	free, busy := spareNodes(snap, unit, att)
	in := elastic.Input{
		Now: now, BudgetNH: sp.BudgetNH, SpentNH: spentNodeHours(j, now), Iterations: sp.Iterations,
		Current: att.NP() / unit, Min: sp.MinNP / unit, Max: sp.MaxNP / unit, Free: free, Busy: busy, Force: j.Spec.Force,
		RestartCost: restartCost(e), CommHeavy: sp.CommHeavy,
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
func (a *Agent) decideElastic(ctx context.Context, st *raftfsm.State, now time.Time) {
	var snap *placement.Snapshot
	cfg := a.elasticOptions().Decision
	for _, id := range st.SortedJobIDs() {
		j := st.Jobs[id]
		att := j.Current()
		if j.Elastic == nil || j.Spec.Elastic == nil || j.State != raftfsm.StateRunning || att == nil || j.Elastic.ResizeAttempt == att.N {
			continue
		}
		if snap == nil {
			s := a.placementSnapshot(st)
			snap = &s
		}
		d := elastic.Decide(cfg, elasticInput(j, att, now, *snap))
		if !d.Resize {
			continue
		}
		target := d.Target * j.Spec.Unit()
		a.log.Info("resizing elastic job", "job", j.ID, "attempt", att.N, "from", att.NP(), "to", target, "reason", d.Reason)
		a.propose(ctx, raftfsm.CmdResizeJob, raftfsm.ResizeJob{ID: j.ID, Attempt: att.N, TargetNP: target, Reason: d.Reason})
	}
}

// elasticPlacement picks the process count of an elastic job's next attempt: its target, less
// what is not free, but at least its minimum; the reason is set when it is not the target. A
// job submitted with --force counts busy nodes as free, as its placement does.
func elasticPlacement(snap placement.Snapshot, j *raftfsm.Job) (int, string) {
	sp, unit, target := j.Spec.Elastic, j.Spec.Unit(), j.Elastic.TargetNP
	free, busy := spareNodes(snap, unit, nil)
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

// toAPIElastic is the elastic part of `shoal job`.
func (a *Agent) toAPIElastic(j *raftfsm.Job, snap func() placement.Snapshot) *api.Elastic {
	sp, e := j.Spec.Elastic, j.Elastic
	if sp == nil || e == nil {
		return nil
	}
	now, unit, opts := time.Now(), j.Spec.Unit(), a.elasticOptions()
	out := &api.Elastic{MinNP: sp.MinNP, MaxNP: sp.MaxNP, Unit: unit, BudgetNH: sp.BudgetNH, SpentNH: spentNodeHours(j, now),
		Iterations: sp.Iterations, CommHeavy: sp.CommHeavy, TargetNP: e.TargetNP, Checkpoints: e.Checkpoints,
		CheckpointDir: jobrun.CheckpointDir(a.cfg.DataDir, j), History: []api.Resize{}, RestartCostS: opts.Decision.DefaultRestartCost.Seconds()}
	if c := restartCost(e); c > 0 {
		out.RestartCostS, out.RestartKnown = c.Seconds(), true
	}
	if sp.Deadline > 0 {
		out.Deadline = tp(j.SubmittedAt.Add(sp.Deadline))
	}
	for _, h := range e.History {
		out.History = append(out.History, api.Resize{At: h.At.UTC(), Attempt: h.Attempt, FromNP: h.FromNP, ToNP: h.ToNP, Reason: h.Reason})
	}
	reported := false
	for i := len(j.Attempts) - 1; i >= 0; i-- {
		if p := j.Attempts[i].Progress; p != nil {
			out.Iter, reported = p.Iter, true
			break
		}
	}
	att := j.Current()
	if att == nil {
		out.Decision = "not placed yet"
		return out
	}
	out.CurrentNP = att.NP()
	if p := att.Progress; p != nil {
		out.ResumedFrom, out.CommShare = p.FirstIter, p.Comm
		if d := p.At.Sub(p.FirstAt).Seconds(); d > 0 {
			out.Rate = float64(p.Iter-p.FirstIter) / d
		}
	}
	switch {
	case j.State == raftfsm.StateRunning && e.ResizeAttempt == att.N:
		out.ResizeRequested = true
		out.Decision = fmt.Sprintf("asked to checkpoint %s ago (SIGUSR1) for %d processes; waiting for exit 75", time.Since(e.ResizeAt).Round(time.Second), e.TargetNP)
	case j.State == raftfsm.StateRunning:
		d := elastic.Decide(opts.Decision, elasticInput(j, att, now, snap()))
		out.Decision = d.Reason
		if !d.FinishTarget.IsZero() {
			out.Predicted = tp(d.FinishTarget)
		}
	case j.State.Terminal():
		out.Decision = "ended"
	default:
		out.Decision = fmt.Sprintf("%s; next attempt on %d processes", j.State, e.TargetNP)
	}
	switch {
	case sp.Iterations <= 0:
		out.FixedSize = "the job declared no total of iterations (--iterations): it runs as a fixed-size job"
	case j.State == raftfsm.StateRunning && att.Progress == nil && !att.StartedAt.IsZero() && now.Sub(att.StartedAt) > opts.NoProgressAfter:
		out.FixedSize = fmt.Sprintf("no progress reported in the %s since attempt %d started: it runs as a fixed-size job until it reports ('shoal progress --iter K' or shoal_progress() in shoal_elastic.h)",
			now.Sub(att.StartedAt).Round(time.Second), att.N)
	case j.State.Terminal() && !reported && !att.StartedAt.IsZero():
		out.FixedSize = "the program never reported progress: it ran as a fixed-size job"
	}
	return out
}
