package jobrun

import (
	"context"
	"time"

	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// ackResend is how long an acknowledged reservation waits before the
// reconciler sends it again (raft may have lost it with a leader).
const ackResend = 2 * time.Second

// Run makes this node match the desired state of jobs until ctx ends:
// reserve and acknowledge its part of new allocations, start the launcher
// of attempts it heads, and kill processes of attempts that are no longer
// live. It is level-triggered and keyed by (job, attempt): running it twice
// starts nothing twice. Nothing starts before the attempts of the node's
// last life are settled. When ctx ends it kills every job process of the
// node (an agent that stops takes its ranks with it) and waits for the
// launchers it started.
func (n *Node) Run(ctx context.Context) {
	defer n.wg.Wait()
	found := n.findSupervised()
	n.claimAdopted(found)
	alive := aliveKeys(found)
	n.removeLeftoverCgroups(alive)
	n.removeLeftoverTempDirs(alive)
	n.startFence(len(alive) > 0)
	if !n.settleLastLife(ctx, adoptedRefs(found)) {
		n.stopJobs(ctx)
		return
	}
	for _, a := range found {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.adopt(ctx, a)
		}()
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.keepLease(ctx)
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last uint64
	lastFull := n.now()
	for {
		select {
		case <-ctx.Done():
			n.stopJobs(ctx)
			return
		case <-tick.C:
		case <-n.d.Applied:
		}
		if idx := n.d.State.Index(); idx != last || n.now().Sub(lastFull) > time.Second {
			last, lastFull = idx, n.now()
			n.reconcile(ctx)
		}
	}
}

// stopJobs ends the node's job processes as Run ends: all of them, or,
// when the node was told to LeaveRunning, all but the attempts that run
// under supervisors, which keep the lease they had (the fence guard stops
// them once it lapses) for the next life to adopt.
func (n *Node) stopJobs(ctx context.Context) {
	n.dropWarm(nil) // a warm helper is no job process yet: none outlives the agent
	keep := map[Key]bool{}
	if n.leaving.Load() {
		for k := range n.supervisedGroups() {
			keep[k] = true
		}
	}
	for _, k := range n.procs.keys() {
		if !keep[k] {
			n.procs.kill(k, 0)
		}
	}
	for k, g := range n.supervisedGroups() {
		if !keep[k] {
			n.killGroup(g, 0)
			n.forgetSupervisor(k)
		}
	}
	for _, k := range n.cgroupKeys() {
		if !keep[k] {
			n.endCgroup(ctx, k, 0, false)
		}
	}
	n.sweep(keep) // an agent that stops takes its ranks with it
	n.removeOMPIDirs(true)
	if len(keep) == 0 {
		n.removeCapabilityFiles(true)
		n.stopFence()
		return
	}
	n.log.Info("leaving attempts running under their supervisors for the agent's next life", "attempts", len(keep))
	if err := n.writeLease(); err != nil {
		n.log.Error("the attempts left running have no fence guard lease", "err", err)
	}
}

func (n *Node) reconcile(ctx context.Context) {
	var jobs []*raftfsm.Job
	n.d.State.View(func(s *raftfsm.State) { jobs = raftfsm.LiveJobs(s) })
	live, running := map[Key]bool{}, map[Key]bool{}
	self := n.cfg.Name
	for _, j := range jobs {
		att := j.Current()
		k := Key{Job: j.ID, Attempt: att.N}
		live[k] = true
		switch j.State {
		case raftfsm.StateLaunching:
			if att.Holds(self) && !att.Acked(self) {
				var gpus []int
				n.d.State.View(func(s *raftfsm.State) { gpus = n.pickGPUs(s, j, att) })
				n.reserve(ctx, k, gpus)
			}
		case raftfsm.StateRunning:
			running[k] = true
			// An elastic attempt asked to resize: its processes here checkpoint and exit 75.
			if j.Elastic != nil && j.Elastic.ResizeAttempt == att.N && len(n.procs.pids(k)) > 0 {
				n.signalResize(k)
			}
			if att.Head == self && n.markLaunched(k) {
				launchtrace.Mark(ctx, n.log, launchtrace.LauncherBegin, k.Job, k.Attempt, n.now())
				n.wg.Add(1)
				go func() {
					defer n.wg.Done()
					n.runLauncher(ctx, j, att)
				}()
			}
		}
	}
	n.watchOOM(ctx, live)
	n.dropSpareWarm(live, running)
	ended := false
	for _, k := range n.procs.keys() {
		if !live[k] {
			n.log.Info("killing processes of an attempt that is no longer live", "job", k.Job, "attempt", k.Attempt)
			n.procs.kill(k, 2*time.Second)
			ended = true
		}
	}
	for k, g := range n.supervisedGroups() {
		if !live[k] && len(n.procs.pids(k)) == 0 { // adopted: not in procs
			n.log.Info("killing an adopted attempt that is no longer live", "job", k.Job, "attempt", k.Attempt)
			n.killGroup(g, 2*time.Second)
			ended = true
		}
	}
	for _, k := range n.cgroupKeys() {
		if !live[k] {
			ended = true
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.endCgroup(ctx, k, 2*time.Second, true)
			}()
		}
	}
	if (ended || n.now().Sub(n.lastSweep) > 5*time.Second) && n.upkeep.CompareAndSwap(false, true) {
		n.lastSweep = n.now()
		// The upkeep reads all of /proc, tens of milliseconds on a busy
		// machine, right after an attempt ends: run here, it held up the
		// next placement's reservation or start by as much. Each step
		// judges what ended by the state as it is when it acts, not by
		// this pass's view.
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			defer n.upkeep.Store(false)
			n.sweepEnded()
			n.removeOMPIDirs(false)
			n.removeCapabilityFiles(false)
			n.pruneBookkeeping()
		}()
	}
}

func (n *Node) markLaunched(k Key) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.launched[k] {
		return false
	}
	n.launched[k] = true
	return true
}

// reserve is the first step of co-allocation on this node: fence the
// attempt (nothing older may run here from now on) and acknowledge,
// with the GPUs it gets here.
func (n *Node) reserve(ctx context.Context, k Key, gpus []int) {
	if n.cfg.NeverAck {
		return
	}
	n.mu.Lock()
	if t, ok := n.acking[k]; ok && n.now().Sub(t) < ackResend {
		n.mu.Unlock()
		return
	}
	n.acking[k] = n.now()
	n.mu.Unlock()
	seen := time.Now() // the lease's clock (renewLeaseSince), not Deps.Now
	launchtrace.Mark(ctx, n.log, launchtrace.PlacementSeen, k.Job, k.Attempt, n.now())
	if err := n.procs.fence(k); err != nil {
		n.log.Warn("refusing reservation", "job", k.Job, "attempt", k.Attempt, "err", err)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		// A node acknowledges only under a lease: the leader must have
		// heard from it, after it saw the placement, before it can run
		// anything of the attempt. One renewal answers every reservation
		// seen before it was sent.
		if n.fencing() {
			if err := n.renewLeaseSince(ctx, seen); err != nil {
				n.log.Warn("no lease: not acknowledging the reservation yet", "job", k.Job, "attempt", k.Attempt, "err", err)
				return
			}
		}
		b, _ := raftfsm.Encode(raftfsm.CmdAckReservation, n.now(), raftfsm.AckReservation{ID: k.Job, Attempt: k.Attempt, Node: n.cfg.Name, GPUs: gpus})
		res, err := n.d.Propose(ctx, b)
		if err != nil {
			n.log.Warn("acknowledge reservation", "job", k.Job, "attempt", k.Attempt, "err", err)
			return
		}
		if res.Err != "" {
			// Refused (a GPU another attempt holds): no cgroup yet, whose
			// device rules would follow a reservation that is not this one.
			return
		}
		launchtrace.Mark(ctx, n.log, launchtrace.AckCommitted, k.Job, k.Attempt, n.now())
		// After the acknowledgement, whose GPUs the cgroup's device rules
		// follow; start_job comes once every host has acknowledged.
		n.warmUp(k)
	}()
}
