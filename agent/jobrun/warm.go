package jobrun

import (
	"errors"
	"os/exec"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Warm helpers: once this node has reserved its part of an attempt, it
// makes the attempt's cgroup and starts the job helper of the attempt's
// first processes here (the head's launcher, MPICH's proxy on the head
// when the launcher reaches it through the remote shell, the process a
// remote shell asks for, the copies of a --mpi none job) ahead of them, waiting in that cgroup for its command
// (jobexec.StartWarm). The helper's start and its cgroup join, on cgroup
// v1 a write that waits for an RCU grace period, then overlap the wait
// for the other hosts' acknowledgements and for start_job, instead of
// coming after them. Nothing of the job runs before the command comes:
// the helper waits as root, holding only its end of a socket to the
// agent, and the command's start still needs the lease and a live,
// running attempt as any start does. A warm helper whose attempt ends
// before it is used is killed and reaped with the attempt's cgroup.

// warmTable holds the warm helpers of this node's attempts.
type warmTable struct {
	mu sync.Mutex
	m  map[Key][]warmHelper
	// running is when each attempt with warm helpers was first seen
	// running here: its spare helpers are aged from then, not from their
	// own start, or an attempt whose start_job came more than warmSpare
	// after its reservation would lose them in the pass that starts its
	// processes.
	running map[Key]time.Time
	// stopped is set when the node stops: a warm start still under way
	// then kills its helper instead of keeping it.
	stopped bool
}

// count is how many warm helpers wait on the node; call under mu.
func (t *warmTable) count() int {
	c := 0
	for _, ws := range t.m {
		c += len(ws)
	}
	return c
}

// warmHelper is one warm helper and when it was started.
type warmHelper struct {
	w       *jobexec.Warm
	started time.Time
}

// warmSpare is how long a warm helper of a running attempt is kept
// unused, from when the attempt runs or the helper started, whichever is
// later: the attempt's processes start within a second of start_job.
const warmSpare = 10 * time.Second

// maxWarm bounds the warm helpers of one attempt on a node (the copies of
// a --mpi none job with many ranks here start the ordinary way past it).
const maxWarm = 4

// maxWarmNode bounds the warm helpers waiting on a node at once. An array
// places hundreds of tasks on a node in one round, and a helper waiting
// for each would hold hundreds of idle processes' memory for as long as
// their starts queue on the node's cores, where a helper started ahead
// saves nothing: past the bound, tasks start the ordinary way. Single
// jobs, which a warm helper makes start sooner, need two at most.
const maxWarmNode = 8

// warmCount is how many processes of job j's current attempt this node
// starts through the job helper as the launch begins: the head's launcher
// or batch script, and on MPICH's head also its proxy (Hydra reaches a
// head whose name does not resolve to this machine through the remote
// shell; one that does is a spare, killed after warmSpare); one process a
// node for the MPI launchers' remote shells; a copy per rank for --mpi none.
// A batch job's other hosts get none: its steps come when the script
// says, not as the attempt starts. Nor does a single copy run under a
// supervisor (supervised.go), which starts its process itself. Nor do an array's tasks: a round places
// hundreds of them on a node, whose starts queue on its cores however
// early each helper starts, so a helper started ahead gains them nothing.
func (n *Node) warmCount(j *raftfsm.Job) int {
	att := j.Current()
	head := att.Head == n.cfg.Name
	switch {
	case j.InArray():
		return 0
	case runsSupervised(j):
		// Its one process starts under a supervisor that outlives the
		// agent, so that a restarted agent adopts it; a warm helper is
		// the agent's child and would take that away. Warming one only
		// for it to go unused would cost a process for nothing.
		return 0
	case j.Spec.Batch && head:
		return 1
	case j.Spec.Batch:
		return 0
	case Flavour(j.Spec.MPI) == MPICH && head:
		return 2
	case Flavour(j.Spec.MPI) == MPICH, Flavour(j.Spec.MPI) == OpenMPI:
		return 1
	}
	np := 0
	for _, h := range att.Hosts {
		if h.Node == n.cfg.Name {
			np += h.NP
		}
	}
	return min(max(np, 1), maxWarm)
}

// warmUp starts attempt k's warm helpers here, as many as it lacks: its
// cgroup (with the limits the attempt's state gives: call it once the
// GPUs this node holds, if any, are committed) and its helpers. A failure
// only means that the processes start the ordinary way, which reports it.
func (n *Node) warmUp(k Key) {
	var j *raftfsm.Job
	n.d.State.View(func(s *raftfsm.State) {
		x := s.Jobs[k.Job]
		if x == nil || x.Attempt != k.Attempt || !x.Current().Holds(n.cfg.Name) ||
			(x.State != raftfsm.StateLaunching && x.State != raftfsm.StateRunning) {
			return
		}
		c := *x
		j = &c
	})
	if j == nil {
		return
	}
	want := n.warmCount(j)
	n.warm.mu.Lock()
	have := len(n.warm.m[k])
	want = min(want, have+maxWarmNode-n.warm.count())
	n.warm.mu.Unlock()
	if have >= want {
		return
	}
	cred, _, err := n.credentialFor(j.Owner)
	if err != nil {
		return
	}
	cgroup, err := n.cgroupDirs(j, k)
	if err != nil {
		return
	}
	spec := n.jobSpec(cred)
	spec.Dir, spec.Cgroup = j.Spec.Workdir, cgroup
	for range want - have {
		w, err := jobexec.StartWarm(n.cfg.Exec, spec)
		if err != nil {
			n.log.Debug("no warm job helper", "job", k.Job, "attempt", k.Attempt, "err", err)
			return
		}
		n.warm.mu.Lock()
		keep := len(n.warm.m[k]) < want && n.warm.count() < maxWarmNode && !n.warm.stopped
		if keep {
			n.warm.m[k] = append(n.warm.m[k], warmHelper{w: w, started: n.now()})
		}
		n.warm.mu.Unlock()
		if !keep {
			n.closeWarm(w)
			return
		}
	}
}

// startProcess starts cmd, a process of attempt k, on one of the
// attempt's warm helpers when it has one for cmd's spec, else the
// ordinary way; wait is cmd.Wait or the warm helper's counterpart.
func (n *Node) startProcess(k Key, cmd *exec.Cmd) (wait func() error, err error) {
	for {
		var w *jobexec.Warm
		n.warm.mu.Lock()
		if ws := n.warm.m[k]; len(ws) > 0 {
			w = ws[0].w
			n.warm.m[k] = ws[1:]
			if len(ws) == 1 {
				delete(n.warm.m, k)
			}
		}
		n.warm.mu.Unlock()
		if w == nil {
			break
		}
		wait, err := w.Start(cmd)
		switch {
		case errors.Is(err, jobexec.ErrWarmSpec):
			n.log.Debug("the warm job helper does not fit the process", "job", k.Job, "attempt", k.Attempt)
			n.closeWarm(w)
			n.dropWarm(func(x Key, _ time.Time) bool { return x != k }) // the others were made alike
		case errors.Is(err, jobexec.ErrWarmGone):
			// Nothing started: the next, or the ordinary way.
			n.log.Debug("the warm job helper is gone", "job", k.Job, "attempt", k.Attempt)
		default:
			if err == nil {
				n.log.Debug("job process started on its warm helper", "job", k.Job, "attempt", k.Attempt, "pid", cmd.Process.Pid)
			}
			return wait, err
		}
	}
	if err := jobexec.Start(cmd); err != nil {
		return nil, err
	}
	return cmd.Wait, nil
}

// dropWarm kills and reaps the warm helpers keep refuses, given their
// attempt and when they started (all of them, for good, when keep is nil:
// the node stops).
func (n *Node) dropWarm(keep func(k Key, started time.Time) bool) {
	n.warm.mu.Lock()
	defer n.warm.mu.Unlock()
	n.warm.stopped = n.warm.stopped || keep == nil
	for k, ws := range n.warm.m {
		kept := ws[:0]
		for _, h := range ws {
			if keep != nil && keep(k, h.started) {
				kept = append(kept, h)
			} else {
				n.closeWarm(h.w)
			}
		}
		if len(kept) == 0 {
			delete(n.warm.m, k)
		} else {
			n.warm.m[k] = kept
		}
	}
}

// dropSpareWarm closes the warm helpers of attempts no longer live, and
// those of running attempts unused warmSpare after the attempt was first
// seen running here (or after they started, when later).
func (n *Node) dropSpareWarm(live, running map[Key]bool) {
	now := n.now()
	n.warm.mu.Lock()
	for k := range n.warm.m {
		if _, ok := n.warm.running[k]; running[k] && !ok {
			n.warm.running[k] = now
		}
	}
	for k := range n.warm.running {
		if !live[k] {
			delete(n.warm.running, k)
		}
	}
	n.warm.mu.Unlock()
	n.dropWarm(func(k Key, started time.Time) bool { // under warm.mu
		if ran := n.warm.running[k]; ran.After(started) {
			started = ran
		}
		return live[k] && (!running[k] || now.Sub(started) < warmSpare)
	})
}

// closeWarm kills and reaps a warm helper beside the caller.
func (n *Node) closeWarm(w *jobexec.Warm) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		w.Close()
	}()
}

// warmPids lists the processes of this node's warm helpers.
func (n *Node) warmPids() map[Key][]int {
	n.warm.mu.Lock()
	defer n.warm.mu.Unlock()
	out := make(map[Key][]int, len(n.warm.m))
	for k, ws := range n.warm.m {
		for _, h := range ws {
			out[k] = append(out[k], h.w.Pid())
		}
	}
	return out
}
