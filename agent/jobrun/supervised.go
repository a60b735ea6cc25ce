package jobrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// An attempt whose processes all run in one process on its head, with its
// output going straight to the attempt's log files, runs under a
// supervisor (jobexec.Supervise) that outlives the agent: an agent that
// stops leaving attempts running (LeaveRunning, what a restart does) lets
// it run on, and its next life adopts it (adopt.go). Other attempts hold
// the agent's pipes or sockets (a `shoal run` job's standard input, the
// copies of --output, a batch script's step socket, the remote ranks'
// streams) and end with the agent as before.

// errLeftRunning is why a supervised launch returned without an outcome:
// the agent stops and leaves the attempt to its next life.
var errLeftRunning = errors.New("left running for the agent's next life")

// adoptable reports whether attempt processes of j can outlive the agent:
// one process on the head (a single copy), no standard input from a
// client, output to the attempt's logs only, and nothing the agent must
// do while it runs (a timeout, an elastic resize).
func adoptable(j *raftfsm.Job, copies int) bool {
	s := &j.Spec
	return copies == 1 && !s.Batch && !s.Stdin && s.Output == "" && s.Error == "" && s.Elastic == nil && s.Timeout == 0
}

// runsSupervised reports whether j's current attempt runs under a
// supervisor: a --mpi none job of one copy that is adoptable (runCopies
// also needs the attempt's log files as its output, which such a job
// always has).
func runsSupervised(j *raftfsm.Job) bool {
	f, err := FlavourOf(&j.Spec)
	return err == nil && f == Copies && adoptable(j, j.Current().NP())
}

// supervisorDir is where attempt k's supervisor keeps its records: in the
// attempt's log directory, which is the agent's and mode 0700.
func (n *Node) supervisorDir(k Key) string {
	return filepath.Join(n.AttemptDir(k), "supervisor")
}

// LeaveRunning makes the node, when its Run ends, leave the attempts that
// run under supervisors running, fenced by the lease they had, for the
// agent's next life to adopt; every other process of a job is killed as
// before. Call it before cancelling Run's context.
func (n *Node) LeaveRunning() { n.leaving.Store(true) }

// runSupervised runs cmd, a command of attempt k built by Command, under a
// supervisor, its output going to stdout and stderr (the attempt's log
// files), and returns its exit status.
func (n *Node) runSupervised(ctx context.Context, k Key, cmd *exec.Cmd, stdout, stderr *os.File) (int, error) {
	dir := n.supervisorDir(k)
	if err := jobexec.PrepareStateDir(dir); err != nil {
		return -1, err
	}
	if err := jobexec.Supervise(cmd, dir); err != nil {
		return -1, err
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Started the ordinary way, never on a warm helper: a warm helper is
	// the agent's child, dies with it and records nothing, so the attempt
	// would not be adopted. Such an attempt warms none (warmCount).
	if err := jobexec.Start(cmd); err != nil {
		return -1, fmt.Errorf("start %q on %s: %w", jobexec.Argv(cmd)[0], n.cfg.Name, err)
	}
	n.cgroupStarted(k)
	pid := cmd.Process.Pid
	n.setSupervised(k, pid)
	n.procs.add(k, cmd)
	n.leaseCovers(k)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		n.procs.remove(k, pid)
		n.setSupervised(k, 0)
		n.reportOOM(ctx, k)
		return exitStatus(err)
	case <-ctx.Done():
		if n.leaving.Load() {
			return -1, errLeftRunning // stays in procs and supervised: Run's end leaves it
		}
		n.procs.kill(k, 2*time.Second)
		err := <-done
		n.procs.remove(k, pid)
		n.setSupervised(k, 0)
		// Killed by the agent that stops: not an end a later life may
		// report as the job's.
		n.forgetSupervisor(k)
		code, _ := exitStatus(err)
		return code, nil
	}
}

// setSupervised records the process group of attempt k's supervisor; 0
// forgets it.
func (n *Node) setSupervised(k Key, pgid int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if pgid == 0 {
		delete(n.supervised, k)
		return
	}
	n.supervised[k] = pgid
}

// supervisedGroups are the attempts under supervisors and their process
// groups.
func (n *Node) supervisedGroups() map[Key]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[Key]int, len(n.supervised))
	for k, g := range n.supervised {
		out[k] = g
	}
	return out
}

// leftRunning reports whether attempt k is left running as the agent stops.
func (n *Node) leftRunning(k Key) bool {
	if !n.leaving.Load() {
		return false
	}
	_, ok := n.supervisedGroups()[k]
	return ok
}

// forgetSupervisor removes attempt k's supervisor records once raft has
// answered its outcome: a later life must not report it again.
func (n *Node) forgetSupervisor(k Key) {
	if err := os.RemoveAll(n.supervisorDir(k)); err != nil {
		n.log.Warn("remove the supervisor's records", "job", k.Job, "attempt", k.Attempt, "err", err)
	}
}

// killGroup ends a supervised attempt's process group: SIGTERM, SIGKILL
// after grace. With no grace it is SIGKILL at once, for an attempt that is
// no longer the cluster's to run: its job gets no SIGTERM whose handler
// would run beside its retry, and a group the fence guard stopped dies
// stopped.
func (n *Node) killGroup(pgid int, grace time.Duration) {
	if grace <= 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return
	}
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGCONT) // a group the fence guard stopped must see its SIGTERM
	go func() {
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) && syscall.Kill(-pgid, 0) == nil {
			time.Sleep(50 * time.Millisecond) // polling the processes' exit
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}()
}

// parseAttemptDir reads a key from an attempt directory's last two
// components (jobs/ID/N).
func parseAttemptDir(dir string) (Key, bool) {
	j, err1 := strconv.ParseUint(filepath.Base(filepath.Dir(dir)), 10, 64)
	a, err2 := strconv.Atoi(filepath.Base(dir))
	return Key{Job: j, Attempt: a}, err1 == nil && err2 == nil && a > 0
}
