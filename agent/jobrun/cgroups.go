package jobrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Confinement: every process of an attempt on this node runs in
// one cgroup of the attempt, made before its first process starts (the job
// helper joins it before it executes anything), killed whole when the
// attempt ends, its usage recorded in raft, then removed. The env-marker
// sweep (sweep.go) stays as the second net, and the only one on a node
// whose agent cannot use cgroups.

// OpenCgroups opens this node's cgroups for jobs: attempts' cgroups go
// under shoal/INSTANCE below the agent's own cgroup, so that agents sharing
// a machine (test clusters) never touch each other's. The error is why the
// node's jobs run unconfined, one line.
func OpenCgroups(name, dataDir string, cfg confine.Config) (*confine.Manager, error) {
	if cfg.Parent == "" {
		cfg.Parent = confine.DefaultConfig().Parent
	}
	cfg.Parent += "/" + instanceOf(name, dataDir)
	return confine.Open(cfg)
}

// cgroupKillTimeout bounds the kill of one attempt's cgroup.
const cgroupKillTimeout = 10 * time.Second

// attemptCgroup is one attempt's cgroup on this node.
type attemptCgroup struct {
	cg      *confine.Cgroup
	limits  confine.Limits
	created time.Time
	// started is when the attempt's first process here started (zero
	// until then): the cgroup is made ahead of it (warm.go), and what
	// raft records is the attempt's time on the node.
	started time.Time
	// oomReported is set once an OOM kill was committed (reportOOM).
	oomReported bool
}

// cgroupTable holds the cgroups of this node's attempts.
type cgroupTable struct {
	mu   sync.Mutex
	live map[Key]*attemptCgroup
}

func cgroupName(k Key) string { return fmt.Sprintf("job-%d-%d", k.Job, k.Attempt) }

// Confined reports whether this node runs its jobs in cgroups, and if not,
// why (for gossip and `shoal nodes`).
func (n *Node) Confined() (bool, string) {
	if n.cfg.Cgroups != nil {
		return true, ""
	}
	why := n.cfg.CgroupsOff
	if why == "" {
		why = "cgroups not configured"
	}
	return false, why
}

// refuseUnconfined is why a job cannot run on this node: one with a memory
// limit on a node that cannot enforce it.
func (n *Node) refuseUnconfined(j *raftfsm.Job) error {
	if ok, why := n.Confined(); !ok && j.Spec.HasMem() {
		return fmt.Errorf("node %s cannot enforce the job's memory limit: jobs run unconfined here (%s)", n.cfg.Name, why)
	}
	return nil
}

// limitsOn are the cgroup limits of job j's attempt on this node: its
// memory (--mem, or --mem-per-rank × its ranks here), a CPU quota of
// --cpus-per-rank × its ranks here, and the node's GPUs it does not hold
// denied, so that CUDA_VISIBLE_DEVICES is not the only thing keeping it
// off another job's GPU.
func (n *Node) limitsOn(j *raftfsm.Job) confine.Limits {
	procs := 0
	var gpus []int
	if a := j.Current(); a != nil {
		for _, h := range a.Hosts {
			if h.Node == n.cfg.Name {
				procs = h.NP
			}
		}
		gpus = a.GPUsOn(n.cfg.Name)
	}
	procs = max(procs, 1) // a head without ranks still runs the launcher
	return confine.Limits{MemoryBytes: j.Spec.MemOn(procs), CPUs: float64(j.Spec.CPUs() * procs),
		DenyDevices: confine.DenyOthers(n.cfg.GPUDevices, gpus)}
}

// cgroupDirs gets or makes the cgroup of attempt k of job j and returns the
// directories the job helper joins; nil on a node without cgroups.
func (n *Node) cgroupDirs(j *raftfsm.Job, k Key) ([]string, error) {
	if err := n.refuseUnconfined(j); err != nil {
		return nil, err
	}
	if err := n.requireLease(); err != nil {
		return nil, err
	}
	m := n.cfg.Cgroups
	if m == nil {
		return nil, nil
	}
	defer n.leaseCovers(k)
	n.cgroups.mu.Lock()
	defer n.cgroups.mu.Unlock()
	if ac := n.cgroups.live[k]; ac != nil {
		return ac.cg.Dirs(), nil
	}
	l := n.limitsOn(j)
	cg, err := m.New(cgroupName(k), l)
	if errors.Is(err, confine.ErrExists) {
		// Left by an earlier life, or by an end that could not delete it.
		n.removeCgroup(cgroupName(k))
		cg, err = m.New(cgroupName(k), l)
	}
	if err != nil {
		return nil, fmt.Errorf("confine job %d attempt %d on %s: %w", k.Job, k.Attempt, n.cfg.Name, err)
	}
	n.cgroups.live[k] = &attemptCgroup{cg: cg, limits: l, created: n.now()}
	launchtrace.Mark(context.Background(), n.log, launchtrace.CgroupReady, k.Job, k.Attempt, n.now())
	return cg.Dirs(), nil
}

// removeCgroup kills and deletes a cgroup by name (one not in the table).
func (n *Node) removeCgroup(name string) {
	cg, err := n.cfg.Cgroups.Load(name)
	if err != nil {
		n.log.Warn("load leftover cgroup", "cgroup", name, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cgroupKillTimeout)
	defer cancel()
	if err := cg.Kill(ctx); err != nil {
		n.log.Warn("kill leftover cgroup", "cgroup", name, "err", err)
	}
	if err := cg.Delete(); err != nil {
		n.log.Warn("delete leftover cgroup", "cgroup", name, "err", err)
	}
}

// removeLeftoverCgroups kills and deletes every cgroup an earlier life of
// this agent left: none of its attempts is live in this life.
func (n *Node) removeLeftoverCgroups(adopted map[Key]bool) {
	if n.cfg.Cgroups == nil {
		return
	}
	for k := range adopted {
		cg, err := n.cfg.Cgroups.Load(cgroupName(k))
		if err != nil {
			n.log.Warn("the cgroup of an adopted attempt", "job", k.Job, "attempt", k.Attempt, "err", err)
			continue
		}
		n.cgroups.mu.Lock()
		// Its process started in an earlier life: its usage is recorded
		// at its end, as of any attempt that started something here.
		now := n.now()
		n.cgroups.live[k] = &attemptCgroup{cg: cg, created: now, started: now}
		n.cgroups.mu.Unlock()
	}
	names, err := n.cfg.Cgroups.List()
	if err != nil {
		n.log.Warn("list leftover cgroups", "err", err)
		return
	}
	for _, name := range names {
		if n.cgroupOfAdopted(name, adopted) {
			continue
		}
		n.log.Info("removing the cgroup of an attempt of an earlier life", "cgroup", name)
		n.removeCgroup(name)
	}
}

// AttemptCgroups names the attempts' cgroups this node has now.
func (n *Node) AttemptCgroups() []string {
	if n.cfg.Cgroups == nil {
		return nil
	}
	names, err := n.cfg.Cgroups.List()
	if err != nil {
		n.log.Warn("list the attempts' cgroups", "err", err)
	}
	return names
}

// cgroupKeys lists the attempts that have a cgroup here.
func (n *Node) cgroupKeys() []Key {
	n.cgroups.mu.Lock()
	defer n.cgroups.mu.Unlock()
	return keysOf(n.cgroups.live)
}

// cgroupStarted notes that a process of attempt k started here.
func (n *Node) cgroupStarted(k Key) {
	n.cgroups.mu.Lock()
	defer n.cgroups.mu.Unlock()
	if ac := n.cgroups.live[k]; ac != nil && ac.started.IsZero() {
		ac.started = n.now()
	}
}

// takeCgroup removes attempt k's cgroup from the table and returns it.
func (n *Node) takeCgroup(k Key) *attemptCgroup {
	n.cgroups.mu.Lock()
	defer n.cgroups.mu.Unlock()
	ac := n.cgroups.live[k]
	delete(n.cgroups.live, k)
	return ac
}

// endCgroup ends attempt k's part on this node: every process in its
// cgroup is killed, however it forked, setsid'd or rewrote its
// environment; its usage is recorded in raft (when record), and the cgroup
// removed.
func (n *Node) endCgroup(ctx context.Context, k Key, grace time.Duration, record bool) {
	ac := n.takeCgroup(k)
	if ac == nil {
		return
	}
	terminate(ac.cg, grace)
	kctx, cancel := context.WithTimeout(context.Background(), cgroupKillTimeout)
	defer cancel()
	if err := ac.cg.Kill(kctx); err != nil {
		n.log.Warn("kill the attempt's cgroup", "job", k.Job, "attempt", k.Attempt, "err", err)
	}
	u, err := ac.cg.Usage()
	if err != nil {
		n.log.Warn("read the attempt's usage", "job", k.Job, "attempt", k.Attempt, "err", err)
	}
	if err := ac.cg.Delete(); err != nil {
		n.log.Warn("delete the attempt's cgroup", "job", k.Job, "attempt", k.Attempt, "err", err)
	}
	launchtrace.Mark(ctx, n.log, launchtrace.CgroupRemoved, k.Job, k.Attempt, n.now())
	// An attempt that started nothing here (killed while its warm helper
	// waited) used nothing of the node's: no record, as before a cgroup
	// was made ahead of its first process.
	if record && err == nil && !ac.started.IsZero() {
		nu := n.nodeUsage(ac, u)
		nu.Final = true
		n.proposeUsage(ctx, k, nu)
	}
}

// terminate sends SIGTERM to every process in a cgroup and waits up to
// grace for them to leave, so that a job may clean up before Kill.
func terminate(cg *confine.Cgroup, grace time.Duration) {
	pids, err := cg.Procs()
	if err != nil || len(pids) == 0 || grace <= 0 {
		return
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if left, err := cg.Procs(); err != nil || len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the processes' exit, as procTable.kill does
	}
}

// nodeUsage is what raft records of a cgroup's usage.
func (n *Node) nodeUsage(ac *attemptCgroup, u confine.Usage) raftfsm.NodeUsage {
	from := ac.started
	if from.IsZero() {
		from = ac.created
	}
	nu := raftfsm.NodeUsage{Node: n.cfg.Name, UserSeconds: u.User.Seconds(), SystemSeconds: u.System.Seconds(),
		CPUSeconds: u.CPUSeconds(), MaxRSSBytes: u.PeakMemory, Wall: n.now().Sub(from).Round(time.Millisecond),
		MemLimit: u.MemoryLimit, OOMKills: u.OOMKills}
	if nu.MemLimit == 0 {
		nu.MemLimit = ac.limits.MemoryBytes
	}
	if u.OOMKills > 0 {
		nu.OOM = oomReason(n.cfg.Name, nu.MemLimit, u.PeakMemory)
	}
	return nu
}

// oomReason is how an attempt that ran out of memory fails.
func oomReason(node string, limit, peak uint64) string {
	l := "none"
	if limit > 0 {
		l = confine.FormatSize(limit)
	}
	return fmt.Sprintf("out of memory on %s (limit %s, peak %s)", node, l, confine.FormatSize(peak))
}

// reportOOM commits at once an OOM kill in attempt k's cgroup, before the
// process that ended reports its exit: the attempt's outcome, committed
// after, then fails with the OOM's reason rather than an exit code.
func (n *Node) reportOOM(ctx context.Context, k Key) {
	n.cgroups.mu.Lock()
	ac := n.cgroups.live[k]
	if ac == nil || ac.oomReported {
		n.cgroups.mu.Unlock()
		return
	}
	u, err := ac.cg.Usage()
	if err != nil || u.OOMKills == 0 {
		n.cgroups.mu.Unlock()
		return
	}
	ac.oomReported = true
	nu := n.nodeUsage(ac, u)
	n.cgroups.mu.Unlock()
	n.log.Warn("the OOM killer ended a process of an attempt", "job", k.Job, "attempt", k.Attempt, "reason", nu.OOM)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n.proposeUsage(pctx, k, nu)
}

// watchOOM reports, on every reconcile, the OOM kills of live attempts'
// cgroups that no process exit has reported yet: a rank killed by the
// kernel under an MPI daemon is noticed here, not when the daemon exits.
func (n *Node) watchOOM(ctx context.Context, live map[Key]bool) {
	n.cgroups.mu.Lock()
	var oom []Key
	for k, ac := range n.cgroups.live {
		if !live[k] || ac.oomReported || ac.limits.MemoryBytes == 0 {
			continue
		}
		if u, err := ac.cg.Usage(); err == nil && u.OOMKills > 0 {
			oom = append(oom, k)
		}
	}
	n.cgroups.mu.Unlock()
	for _, k := range oom {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.reportOOM(ctx, k)
		}()
	}
}

// proposeUsage commits a usage record, retrying while ctx lasts.
func (n *Node) proposeUsage(ctx context.Context, k Key, u raftfsm.NodeUsage) {
	b, err := raftfsm.Encode(raftfsm.CmdRecordUsage, n.now(), raftfsm.RecordUsage{ID: k.Job, Attempt: k.Attempt, Usage: u})
	if err != nil {
		n.log.Error("encode record_usage", "err", err)
		return
	}
	for ctx.Err() == nil {
		res, err := n.d.Propose(ctx, b)
		if err == nil {
			if res.Err != "" {
				n.log.Info("usage not recorded", "job", k.Job, "attempt", k.Attempt, "err", res.Err) // e.g. purged
			}
			return
		}
		n.log.Warn("record usage, retrying", "job", k.Job, "attempt", k.Attempt, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitOOM gives the other nodes of a failed attempt with a memory limit a
// moment to commit an OOM kill: Hydra's and Open MPI's launchers exit as
// soon as a rank is killed, often before the rank's node has reported why.
func (n *Node) waitOOM(ctx context.Context, j *raftfsm.Job, k Key) {
	if !j.Spec.HasMem() || len(j.Current().Hosts) < 2 {
		return
	}
	deadline := n.now().Add(1500 * time.Millisecond)
	for n.now().Before(deadline) {
		found := false
		n.d.State.View(func(s *raftfsm.State) {
			if x := s.Jobs[k.Job]; x != nil && k.Attempt <= len(x.Attempts) {
				for _, u := range x.Attempts[k.Attempt-1].Usage {
					found = found || u.OOM != ""
				}
			}
		})
		if found {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond): // Applied is the reconciler's own wake-up
		}
	}
}

// cgroupOfAdopted reports whether name is the cgroup of one of the adopted attempts.
func (n *Node) cgroupOfAdopted(name string, adopted map[Key]bool) bool {
	for k := range adopted {
		if cgroupName(k) == name {
			return true
		}
	}
	return false
}
