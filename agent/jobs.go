package agent

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// jobState is the node-local bookkeeping of the job reconciler.
type jobState struct {
	mu       sync.Mutex
	launched map[jobKey]bool      // attempts whose launcher this node (as head) started
	acking   map[jobKey]time.Time // reservations acknowledged, and when (re-sent if raft lost it)
	el       elasticState         // elastic jobs: options, signals sent, progress committed
	ompiDirs map[jobKey]ompiDir   // Open MPI session directory bases of attempts (ompi.go)
	// lastSweep is when stray processes were last looked for (sweep.go).
	lastSweep time.Time
}

// startJobs starts this node's job reconciler and registers the leader's
// limit sync (the leader's job scheduling is a duty of leading.go).
func (a *Agent) startJobs() {
	a.leaderHooks = append(a.leaderHooks, a.syncLimits)
	a.goLoop("jobs", a.jobLoop)
}

// jobLoop makes this node match the desired state of jobs: reserve and
// acknowledge its part of new allocations, start the launcher of attempts
// it heads, and kill processes of attempts that are no longer live. It is
// level-triggered and keyed by (job, attempt): running it twice starts
// nothing twice.
func (a *Agent) jobLoop(ctx context.Context) {
	if !a.settleLastLife(ctx) {
		return
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last uint64
	lastFull := time.Now()
	for {
		select {
		case <-ctx.Done():
			for _, k := range a.procs.keys() {
				a.procs.kill(k, 0)
			}
			a.sweep(nil) // an agent that stops takes its ranks with it
			a.removeOMPIDirs(true)
			return
		case <-tick.C:
		case <-a.appliedJobs:
		}
		if idx := a.fsm.Index(); idx != last || time.Since(lastFull) > time.Second {
			last, lastFull = idx, time.Now()
			a.reconcileJobs(ctx)
		}
	}
}

func (a *Agent) reconcileJobs(ctx context.Context) {
	st := a.fsm.State()
	live := map[jobKey]bool{}
	self := a.cfg.Name
	for _, id := range st.SortedJobIDs() {
		j := st.Jobs[id]
		att := j.Current()
		if att == nil {
			continue
		}
		k := jobKey{Job: j.ID, Attempt: att.N}
		if j.State.Live() {
			live[k] = true
		}
		switch j.State {
		case raftfsm.StateLaunching:
			if att.Holds(self) && !att.Acked(self) {
				a.reserve(ctx, k)
			}
		case raftfsm.StateRunning:
			// An elastic attempt asked to resize: its processes here checkpoint and exit 75.
			if j.Elastic != nil && j.Elastic.ResizeAttempt == att.N && len(a.procs.pids(k)) > 0 {
				a.signalResize(k)
			}
			if att.Head == self && a.markLaunched(k) {
				a.wg.Add(1)
				go func() {
					defer a.wg.Done()
					a.runLauncher(a.ctx, j, att)
				}()
			}
		}
	}
	ended := false
	for _, k := range a.procs.keys() {
		if !live[k] {
			a.log.Info("killing processes of an attempt that is no longer live", "job", k.Job, "attempt", k.Attempt)
			a.procs.kill(k, 2*time.Second)
			ended = true
		}
	}
	if ended || time.Since(a.jobs.lastSweep) > 5*time.Second {
		a.jobs.lastSweep = time.Now()
		a.sweep(live)
		a.removeOMPIDirs(false)
		a.pruneJobBookkeeping()
	}
}

func (a *Agent) markLaunched(k jobKey) bool {
	a.jobs.mu.Lock()
	defer a.jobs.mu.Unlock()
	if a.jobs.launched[k] {
		return false
	}
	a.jobs.launched[k] = true
	return true
}

// reserve is the first step of co-allocation on this node: fence the
// attempt (nothing older may run here from now on) and acknowledge.
func (a *Agent) reserve(ctx context.Context, k jobKey) {
	if a.cfg.Testing.NeverAck {
		return
	}
	a.jobs.mu.Lock()
	if t, ok := a.jobs.acking[k]; ok && time.Since(t) < 2*time.Second {
		a.jobs.mu.Unlock()
		return
	}
	a.jobs.acking[k] = time.Now()
	a.jobs.mu.Unlock()
	if err := a.procs.fence(k); err != nil {
		a.log.Warn("refusing reservation", "job", k.Job, "attempt", k.Attempt, "err", err)
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		b, _ := raftfsm.Encode(raftfsm.CmdAckReservation, time.Now(), raftfsm.AckReservation{ID: k.Job, Attempt: k.Attempt, Node: a.cfg.Name})
		if _, err := a.Apply(ctx, b); err != nil {
			a.log.Warn("acknowledge reservation", "job", k.Job, "attempt", k.Attempt, "err", err)
		}
	}()
}
