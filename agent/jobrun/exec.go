package jobrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// WaitRunnable waits briefly for this node's copy of the state to show
// attempt k running with this node in it, and returns a copy of the job:
// an exec request can overtake the raft entry that started the job (the
// head starts its launcher as soon as it applies start_job, and the
// launcher's remote starts race that entry to the other hosts). It checks
// again as each entry is applied here, so the exec goes on the moment
// start_job arrives; the recheck timer only covers the end of the agent's
// settling of its last life, which no entry announces.
func (n *Node) WaitRunnable(ctx context.Context, k Key) (*raftfsm.Job, error) {
	deadline := n.now().Add(runnableWait)
	for {
		changed := n.d.State.Changed() // before the check: an entry applied between the two still wakes us
		j, err := n.runnableInThisLife(k)
		if err == nil || n.now().After(deadline) {
			return j, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-n.after(runnableRecheck):
		}
	}
}

// runnableWait bounds how long an exec request waits for its attempt to
// be running here; runnableRecheck is how often it looks again when
// nothing is applied meanwhile.
const (
	runnableWait    = 5 * time.Second
	runnableRecheck = 250 * time.Millisecond
)

func (n *Node) runnable(k Key) (*raftfsm.Job, error) {
	var out *raftfsm.Job
	var err error
	n.d.State.View(func(s *raftfsm.State) {
		j := s.Jobs[k.Job]
		switch {
		case j == nil:
			err = fmt.Errorf("no job %d", k.Job)
		case j.Attempt != k.Attempt:
			err = fmt.Errorf("job %d is at attempt %d, not %d", k.Job, j.Attempt, k.Attempt)
		case j.State != raftfsm.StateRunning:
			err = fmt.Errorf("job %d attempt %d is %s, not running", k.Job, k.Attempt, j.State)
		case !j.Current().Holds(n.cfg.Name):
			err = fmt.Errorf("job %d attempt %d does not hold node %s", k.Job, k.Attempt, n.cfg.Name)
		default:
			c := *j
			c.Spec.Env = append([]string(nil), j.Spec.Env...)
			out = &c
		}
	})
	return out, err
}

// Command builds a process of attempt k of job: the owner's identity and
// groups, the job's working directory and environment, shoal's variables,
// extra, and the site's job limits, all applied by the job helper
// (jobexec) before it executes argv (or shell, with /bin/sh -c).
func (n *Node) Command(job *raftfsm.Job, k Key, argv []string, shell string, extra []string) (*exec.Cmd, error) {
	if shell != "" {
		argv = []string{"/bin/sh", "-c", shell}
	}
	cred, home, err := n.credentialFor(job.Owner)
	if err != nil {
		return nil, err
	}
	cgroup, err := n.cgroupDirs(job, k)
	if err != nil {
		return nil, err
	}
	env, err := n.withCapabilityFile(n.processEnv(job, k, home, extra), job, k, cred)
	if err != nil {
		return nil, err
	}
	return n.command(cred, cgroup, job.Spec.Workdir, argv, env)
}

// command builds a job process; cgroup is the attempt's cgroup, which the
// helper joins before it executes argv.
func (n *Node) command(cred *jobexec.Cred, cgroup []string, dir string, argv, env []string) (*exec.Cmd, error) {
	spec := n.jobSpec(cred)
	spec.Dir, spec.Cgroup = dir, cgroup
	cmd, err := jobexec.Command(n.cfg.Exec, spec, argv)
	if err != nil {
		return nil, err
	}
	cmd.Env = env
	return cmd, nil
}

// processEnv is the whole environment of a job process: a fixed base for
// the owner, the job's variables, shoal's, and extra last.
func (n *Node) processEnv(job *raftfsm.Job, k Key, home string, extra []string) []string {
	env := append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "USER=" + job.Owner, "LOGNAME=" + job.Owner}, job.Spec.Env...)
	env = append(env,
		"SHOAL_JOB_ID="+strconv.FormatUint(k.Job, 10), "SHOAL_ATTEMPT="+strconv.Itoa(k.Attempt), "SHOAL_NODE="+n.cfg.Name,
		"SHOAL_AGENT_ADDR="+n.cfg.LocalAddr, "SHOAL_CA_FILE="+n.cfg.CAFile, "SHOAL_CA_CERTS="+n.cfg.CACerts, n.markerFor(k))
	if s := n.cfg.Socket; s != "" {
		// For helpers that do not speak TLS (shoal_elastic.h): the
		// socket needs none, and the job capability still authorises.
		env = append(env, "SHOAL_AGENT_SOCK="+s)
	}
	for i := range job.Attempts {
		if a := &job.Attempts[i]; a.N == k.Attempt {
			env = append(env, n.gpuEnv(a)...)
		}
	}
	return append(env, extra...)
}

// jobSpec is what the job helper does for every process it starts for a
// job, or for any filesystem work on a job's behalf: reset the limits and
// the OOM score the agent may run with (an administrator's
// oom_score_adj=-1000 for the agent must not shield every job), and become
// the owner.
func (n *Node) jobSpec(cred *jobexec.Cred) jobexec.Spec {
	oom := 0
	return jobexec.Spec{Cred: cred, Limits: n.jobLimits, OOMScoreAdj: &oom, Parent: os.Getpid()}
}

// asOwner does filesystem work for a job with its owner's permissions, in
// the job helper: a path the owner chose (a checkpoint directory, a
// symlink they planted) then reaches nothing the owner could not reach.
func (n *Node) asOwner(owner string, mkdir, removeAll string) error {
	cred, _, err := n.credentialFor(owner)
	if err != nil {
		return err
	}
	spec := n.jobSpec(cred)
	spec.Mkdir, spec.RemoveAll = mkdir, removeAll
	return jobexec.Run(n.cfg.Exec, spec)
}

// credentialFor runs a job as its owner, with the owner's primary and
// supplementary groups, when the agent is root and the owner is another
// user. An agent that is not root runs only its own user's jobs: another
// owner's job is refused (Deps.MayRunAs), never run under the agent's
// identity.
func (n *Node) credentialFor(owner string) (*jobexec.Cred, string, error) {
	me, err := user.Current()
	if err != nil {
		return nil, "/", fmt.Errorf("who am I: %w", err)
	}
	if owner == me.Username {
		return nil, me.HomeDir, nil
	}
	if err := n.d.MayRunAs(owner); err != nil {
		return nil, "", err
	}
	u, err := user.Lookup(owner)
	if err != nil {
		return nil, "", fmt.Errorf("job owner %q is not a user on this node: %w", owner, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, "", fmt.Errorf("job owner %q: uid %q: %w", owner, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, "", fmt.Errorf("job owner %q: gid %q: %w", owner, u.Gid, err)
	}
	c := &jobexec.Cred{User: owner, UID: uint32(uid), GID: uint32(gid)}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, "", fmt.Errorf("job owner %q: groups: %w", owner, err)
	}
	for _, id := range ids {
		g, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return nil, "", fmt.Errorf("job owner %q: group id %q: %w", owner, id, err)
		}
		c.Groups = append(c.Groups, uint32(g))
	}
	if !slices.Contains(c.Groups, c.GID) {
		c.Groups = append(c.Groups, c.GID)
	}
	return c, u.HomeDir, nil
}

// RunStreaming starts cmd as a process of attempt k, copies its output to
// stdout and stderr, and returns its exit status. Cancelling ctx kills the
// process group.
func (n *Node) RunStreaming(ctx context.Context, k Key, cmd *exec.Cmd, stdout, stderr io.Writer) (int, error) {
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A process that escaped the process group (setsid, double fork) may
	// hold the output pipe for ever: once the process itself has exited,
	// its output is read for a little longer, then the attempt goes on to
	// its end, where the cgroup's kill reaches the escapee.
	cmd.WaitDelay = outputGrace
	wait, err := n.startProcess(k, cmd)
	if err != nil {
		return -1, fmt.Errorf("start %q on %s: %w", jobexec.Argv(cmd)[0], n.cfg.Name, err)
	}
	launchtrace.Mark(ctx, n.log, launchtrace.HelperStarted, k.Job, k.Attempt, n.now())
	n.cgroupStarted(k)
	pid := cmd.Process.Pid
	n.procs.add(k, cmd)
	n.leaseCovers(k)
	defer n.procs.remove(k, pid)
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		n.reportOOM(ctx, k)
		return exitStatus(err)
	case <-ctx.Done():
		n.procs.kill(k, 2*time.Second)
		err := <-done
		// The launcher hung up (an MPI launcher ends its remote daemons
		// when a rank died): the rank may have died of its memory limit.
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		n.reportOOM(rctx, k)
		cancel()
		code, _ := exitStatus(err)
		return code, nil
	}
}

// outputGrace is how long a job process's output is still read after it
// exited (exec.Cmd.WaitDelay).
const outputGrace = 3 * time.Second

func exitStatus(err error) (int, error) {
	if err == nil || errors.Is(err, exec.ErrWaitDelay) {
		return 0, nil // ErrWaitDelay: exited 0, but something it left held its output
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return -1, err
}

// ErrNotRunnable marks an exec request for an attempt this node does not
// run (unknown, ended, not here, or already fenced off).
var ErrNotRunnable = errors.New("attempt not runnable here")

// PrepareExec readies one command of a running attempt on this node (the
// server side of `shoal rsh`): it waits for the attempt to show up as
// running here, fences it, and builds the process; the returned function
// runs it, streaming its output. An Open MPI daemon gets a session
// directory of this node's own.
func (n *Node) PrepareExec(ctx context.Context, k Key, argv []string, shell string, env []string) (func(context.Context, io.Writer, io.Writer) (int, error), error) {
	launchtrace.Mark(ctx, n.log, launchtrace.ExecReceived, k.Job, k.Attempt, n.now())
	job, err := n.WaitRunnable(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRunnable, err)
	}
	if err := n.Fence(k); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotRunnable, err)
	}
	ompiEnv, err := n.OMPISessionEnv(job, k)
	if err != nil {
		return nil, err
	}
	cmd, err := n.Command(job, k, argv, shell, append(ompiEnv, env...))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, stdout, stderr io.Writer) (int, error) {
		return n.RunStreaming(ctx, k, cmd, stdout, stderr)
	}, nil
}
