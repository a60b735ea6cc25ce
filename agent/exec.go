package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleExec runs one command of a running job attempt on this node (or
// relays it to the node named in the request) and streams its output back
// as frames. It is the server side of `shoal rsh`. When the caller goes
// away, the command's whole process group is killed: no orphans.
func (a *Agent) handleExec(w http.ResponseWriter, r *http.Request) {
	granted, ok := a.authTokenOrJob(w, r)
	if !ok {
		return
	}
	var req api.ExecRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, "decode exec request: "+err.Error())
		return
	}
	if granted != nil && (req.Job != granted.Job || req.Attempt != granted.Attempt) {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("capability is for job %d attempt %d", granted.Job, granted.Attempt))
		return
	}
	// Authenticated, request read: the command's output may stream for hours.
	liftDeadlines(w)
	if len(req.Argv) == 0 && req.Shell == "" {
		writeErr(w, http.StatusBadRequest, "nothing to run: give argv or shell")
		return
	}
	if req.Node != "" && req.Node != a.cfg.Name {
		a.relayExec(w, r, req)
		return
	}
	k := jobKey{Job: req.Job, Attempt: req.Attempt}
	job, err := a.waitRunnable(r.Context(), k)
	if err != nil {
		writeErr(w, http.StatusConflict, err.Error())
		return
	}
	if err := a.procs.fence(k); err != nil {
		writeErr(w, http.StatusConflict, err.Error())
		return
	}
	// An Open MPI daemon gets a session directory of this node's own (ompi.go).
	ompiEnv, err := a.ompiSessionEnv(job, k)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	cmd, err := a.jobCommand(job, k, req.Argv, req.Shell, append(ompiEnv, req.Env...))
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/x-shoal-exec")
	w.WriteHeader(http.StatusOK)
	fw := &frameWriter{w: w}
	code, err := a.runStreaming(r.Context(), k, cmd, fw.stream(api.FrameStdout), fw.stream(api.FrameStderr))
	if err != nil {
		fw.frame(api.FrameError, []byte(err.Error()))
		return
	}
	fw.frame(api.FrameExit, api.ExitFrame(code))
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

// relayExec forwards an exec request to the agent of the node it names and
// streams the answer back: the caller (a job process holding only a job
// capability) never needs the cluster token.
func (a *Agent) relayExec(w http.ResponseWriter, r *http.Request, req api.ExecRequest) {
	base, err := a.httpAddrOf(req.Node)
	if err != nil {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("unknown node %q: %v", req.Node, err))
		return
	}
	body, _ := json.Marshal(req)
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, base+"/v1/exec", strings.NewReader(string(body)))
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	// No token: this agent's client certificate authenticates it (mutual TLS).
	resp, err := a.streamClient.Do(out)
	if err != nil {
		writeErr(w, http.StatusBadGateway, fmt.Sprintf("reach %s: %v", req.Node, err))
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	copyFlush(w, resp.Body)
}

// copyFlush copies a stream, flushing after every read so output reaches
// the caller as it is produced.
func copyFlush(w http.ResponseWriter, r io.Reader) {
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// frameWriter serialises frames from the stdout and stderr copiers onto one
// HTTP response and flushes each.
type frameWriter struct {
	mu sync.Mutex
	w  http.ResponseWriter
}

func (f *frameWriter) frame(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := api.WriteFrame(f.w, kind, p); err != nil {
		return err
	}
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return nil
}

type frameStream struct {
	f    *frameWriter
	kind byte
}

func (f *frameWriter) stream(kind byte) io.Writer { return frameStream{f, kind} }

func (s frameStream) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += api.MaxFrame {
		end := min(off+api.MaxFrame, len(p))
		if err := s.f.frame(s.kind, p[off:end]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}
