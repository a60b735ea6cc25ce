package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/httpapi"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// prepareExec readies one command of a running job attempt on this node
// for the HTTP API's POST /v1/exec (httpapi.Backend.PrepareExec): the
// returned function runs it, streaming its output.
// TODO(#20 merge): the executor of agent/jobrun.
func (a *Agent) prepareExec(ctx context.Context, req api.ExecRequest) (func(context.Context, io.Writer, io.Writer) (int, error), error) {
	k := jobKey{Job: req.Job, Attempt: req.Attempt}
	job, err := a.waitRunnable(ctx, k)
	if err != nil {
		return nil, httpapi.WithStatus(http.StatusConflict, err)
	}
	if err := a.procs.fence(k); err != nil {
		return nil, httpapi.WithStatus(http.StatusConflict, err)
	}
	// An Open MPI daemon gets a session directory of this node's own (ompi.go).
	ompiEnv, err := a.ompiSessionEnv(job, k)
	if err != nil {
		return nil, err
	}
	cmd, err := a.jobCommand(job, k, req.Argv, req.Shell, append(ompiEnv, req.Env...))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, stdout, stderr io.Writer) (int, error) {
		return a.runStreaming(ctx, k, cmd, stdout, stderr)
	}, nil
}

// waitRunnable waits briefly for this node's copy of the FSM to show the
// attempt running with this node in it: the exec request can overtake the
// raft entry that started the job.
func (a *Agent) waitRunnable(ctx context.Context, k jobKey) (*raftfsm.Job, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		j, err := a.runnableInThisLife(k)
		if err == nil || time.Now().After(deadline) {
			return j, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (a *Agent) runnable(k jobKey) (*raftfsm.Job, error) {
	var out *raftfsm.Job
	var err error
	a.fsm.View(func(s *raftfsm.State) {
		j := s.Jobs[k.Job]
		switch {
		case j == nil:
			err = fmt.Errorf("no job %d", k.Job)
		case j.Attempt != k.Attempt:
			err = fmt.Errorf("job %d is at attempt %d, not %d", k.Job, j.Attempt, k.Attempt)
		case j.State != raftfsm.StateRunning:
			err = fmt.Errorf("job %d attempt %d is %s, not running", k.Job, k.Attempt, j.State)
		case !j.Current().Holds(a.cfg.Name):
			err = fmt.Errorf("job %d attempt %d does not hold node %s", k.Job, k.Attempt, a.cfg.Name)
		default:
			c := *j
			c.Spec.Env = append([]string(nil), j.Spec.Env...)
			out = &c
		}
	})
	return out, err
}

// jobCommand builds a job process: the owner's identity and groups, the
// job's working directory and environment, shoal's variables, and the
// site's job limits, all applied by the job helper (jobexec) before it
// executes the command.
func (a *Agent) jobCommand(job *raftfsm.Job, k jobKey, argv []string, shell string, extra []string) (*exec.Cmd, error) {
	if shell != "" {
		argv = []string{"/bin/sh", "-c", shell}
	}
	cred, home, err := a.credentialFor(job.Owner)
	if err != nil {
		return nil, err
	}
	spec := a.jobSpec(cred)
	spec.Dir = job.Spec.Workdir
	cmd, err := jobexec.Command(a.cfg.Bin, spec, argv)
	if err != nil {
		return nil, err
	}
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "USER=" + job.Owner, "LOGNAME=" + job.Owner}, job.Spec.Env...)
	cmd.Env = append(cmd.Env,
		"SHOAL_JOB_ID="+strconv.FormatUint(k.Job, 10), "SHOAL_ATTEMPT="+strconv.Itoa(k.Attempt), "SHOAL_NODE="+a.cfg.Name,
		"SHOAL_AGENT_ADDR="+a.localAddr(), "SHOAL_CA_FILE="+a.caFile(), "SHOAL_CA_CERTS="+a.caCerts(), a.markerFor(k))
	if s := a.SocketPath(); s != "" {
		// For helpers that do not speak TLS (shoal_elastic.h): the
		// socket needs none, and the job capability still authorises.
		cmd.Env = append(cmd.Env, "SHOAL_AGENT_SOCK="+s)
	}
	cmd.Env = append(cmd.Env, extra...)
	return cmd, nil
}

// jobSpec is what the job helper does for every process it starts for a
// job, or for any filesystem work on a job's behalf: reset the limits and
// the OOM score the agent may run with (an administrator's
// oom_score_adj=-1000 for the agent must not shield every job), and become
// the owner.
func (a *Agent) jobSpec(cred *jobexec.Cred) jobexec.Spec {
	oom := 0
	return jobexec.Spec{Cred: cred, Limits: a.jobLimits, OOMScoreAdj: &oom, Parent: os.Getpid()}
}

// asOwner does filesystem work for a job with its owner's permissions, in
// the job helper: a path the owner chose (a checkpoint directory, a
// symlink they planted) then reaches nothing the owner could not reach.
func (a *Agent) asOwner(owner string, mkdir, removeAll string) error {
	cred, _, err := a.credentialFor(owner)
	if err != nil {
		return err
	}
	spec := a.jobSpec(cred)
	spec.Mkdir, spec.RemoveAll = mkdir, removeAll
	return jobexec.Run(a.cfg.Bin, spec)
}

// credentialFor runs a job as its owner, with the owner's primary and
// supplementary groups, when the agent is root and the owner is another
// user. An agent that is not root runs only its own user's jobs: another
// owner's job is refused (singleuser.go), never run under the agent's
// identity.
func (a *Agent) credentialFor(owner string) (*jobexec.Cred, string, error) {
	me, err := user.Current()
	if err != nil {
		return nil, "/", fmt.Errorf("who am I: %w", err)
	}
	if owner == me.Username {
		return nil, me.HomeDir, nil
	}
	if err := notRootRefusal(a.self, a.cfg.Name, owner); err != nil {
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

// runStreaming starts cmd as a process of attempt k, copies its output to
// stdout and stderr, and returns its exit status. Cancelling ctx kills the
// process group.
func (a *Agent) runStreaming(ctx context.Context, k jobKey, cmd *exec.Cmd, stdout, stderr io.Writer) (int, error) {
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := jobexec.Start(cmd); err != nil {
		return -1, fmt.Errorf("start %q on %s: %w", jobexec.Argv(cmd)[0], a.cfg.Name, err)
	}
	pid := cmd.Process.Pid
	a.procs.add(k, cmd)
	defer a.procs.remove(k, pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitStatus(err)
	case <-ctx.Done():
		a.procs.kill(k, 2*time.Second)
		err := <-done
		code, _ := exitStatus(err)
		return code, nil
	}
}

func exitStatus(err error) (int, error) {
	if err == nil {
		return 0, nil
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
