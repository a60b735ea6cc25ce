package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// runLauncher runs on the head node of a running attempt: it starts the
// MPI launcher (or the plain copies), writes the job's output to the
// attempt's log files, and commits the outcome. A launcher that cannot
// start fails the attempt with the reason instead of hanging.
func (a *Agent) runLauncher(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt) {
	k := jobKey{Job: j.ID, Attempt: att.N}
	log := a.log.With("job", j.ID, "attempt", att.N)
	boots := a.hostBoots(ctx, att)
	code, reason := a.launch(ctx, j, att, k)
	if ctx.Err() != nil {
		return // the agent is stopping; the leader fails the attempt when it sees us gone
	}
	var typ string
	var body any
	// A node that dies under a job usually makes the launcher fail before
	// gossip declares it dead. Blame the program only when every node of
	// the attempt still answers; otherwise the attempt is requeued.
	checkpointed := code == raftfsm.ExitCheckpointed && reason == "" && j.Spec.Elastic != nil
	if (reason != "" || code != 0) && !checkpointed {
		if lost := a.unreachable(ctx, att); len(lost) > 0 {
			reason = fmt.Sprintf("lost node(s) %v during attempt %d", lost, att.N)
			log.Warn("attempt lost nodes", "nodes", lost)
			typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Reason: reason, Retry: true, Lost: lost}
		} else if back := a.restartedHosts(ctx, boots); len(back) > 0 {
			// Answering again, but a new life: the attempt's processes there died (life.go).
			reason = fmt.Sprintf("node(s) %v restarted during attempt %d", back, att.N)
			log.Warn("attempt lost a node to a restart", "nodes", back)
			typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Reason: reason, Retry: true}
		}
	}
	if typ != "" {
		// decided above
	} else if reason != "" {
		log.Warn("attempt failed", "reason", reason)
		typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Reason: reason}
	} else {
		log.Info("attempt exited", "code", code)
		typ, body = raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: j.ID, Attempt: att.N, ExitCode: &code}
	}
	b, _ := raftfsm.Encode(typ, time.Now(), body)
	// The outcome must reach raft whatever happens to the leader meanwhile:
	// retry until it is committed or refused.
	for ctx.Err() == nil {
		res, err := a.Apply(ctx, b)
		if err == nil {
			if res.Err != "" {
				log.Info("outcome not recorded", "err", res.Err) // e.g. the job was killed meanwhile
			}
			return
		}
		log.Warn("record attempt outcome, retrying", "err", err)
	}
}

func (a *Agent) launch(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, k jobKey) (int, string) {
	dir := a.attemptDir(k)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return -1, "create log dir: " + err.Error()
	}
	stdout, err := openAttemptLog(filepath.Join(dir, "stdout"))
	if err != nil {
		return -1, "create log: " + err.Error()
	}
	defer stdout.Close()
	stderr, err := openAttemptLog(filepath.Join(dir, "stderr"))
	if err != nil {
		return -1, "create log: " + err.Error()
	}
	defer stderr.Close()
	if err := a.procs.fence(k); err != nil {
		return -1, err.Error()
	}
	if j.Spec.Elastic != nil {
		if err := a.makeCheckpointDir(j); err != nil {
			return -1, err.Error()
		}
	}
	if j.Spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, j.Spec.Timeout)
		defer cancel()
	}
	var code int
	if j.Spec.MPI == "none" || j.Spec.MPI == "" {
		code, err = a.runCopies(ctx, j, att, stdout, stderr)
	} else {
		code, err = a.runMPI(ctx, j, att, k, stdout, stderr)
	}
	if err != nil {
		return -1, err.Error()
	}
	if j.Spec.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return -1, fmt.Sprintf("timed out after %v", j.Spec.Timeout)
	}
	return code, ""
}

func (a *Agent) attemptDir(k jobKey) string {
	return filepath.Join(a.cfg.DataDir, "jobs", strconv.FormatUint(k.Job, 10), strconv.Itoa(k.Attempt))
}

func hostSpec(att *raftfsm.Attempt) string {
	parts := make([]string, len(att.Hosts))
	for i, h := range att.Hosts {
		parts[i] = h.Node + ":" + strconv.Itoa(h.Procs)
	}
	return strings.Join(parts, ",")
}

// runMPI starts mpiexec (MPICH's Hydra) or mpirun (Open MPI) with shoal rsh
// as the remote launcher, through a small wrapper that carries the
// attempt's capability: MPI launchers take one executable path.
func (a *Agent) runMPI(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, k jobKey, stdout, stderr io.Writer) (int, error) {
	cred, _, err := a.credentialFor(j.Owner)
	if err != nil {
		return -1, err
	}
	script := fmt.Sprintf("#!/bin/sh\nSHOAL_JOB_CAP='%s' SHOAL_AGENT_ADDR='%s' SHOAL_CA_FILE='%s' SHOAL_CA_CERTS='%s' exec '%s' rsh \"$@\"\n",
		a.jobCapability(k), a.localAddr(), a.caFile(), a.caCerts(), a.bin())
	tmp, wrapper, err := writeLauncherWrapper(k, script, cred)
	if err != nil {
		return -1, err
	}
	defer os.RemoveAll(tmp) // root's own directory (writeLauncherWrapper)
	np := strconv.Itoa(att.NP())
	extra := a.jobEnv(j, att, k)
	var argv []string
	switch j.Spec.MPI {
	case "mpich":
		argv = []string{lookFirst("mpiexec.mpich", "mpiexec.hydra", "mpiexec"), "-launcher", "ssh", "-launcher-exec", wrapper,
			"-hosts", hostSpec(att), "-n", np}
	case "openmpi":
		argv = []string{lookFirst("mpirun.openmpi", "mpirun"), "--mca", "plm_rsh_agent", wrapper,
			"--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "routed", "direct", "--mca", "mpi_yield_when_idle", "1",
			"--host", hostSpec(att), "-np", np}
		if att.Degraded {
			argv = append(argv, "--oversubscribe")
		}
		if os.Geteuid() == 0 && cred == nil {
			argv = append(argv, "--allow-run-as-root")
		}
		for _, kv := range append(slices.Clone(j.Spec.Env), extra...) {
			name, _, _ := strings.Cut(kv, "=")
			argv = append(argv, "-x", name)
		}
	default:
		return -1, fmt.Errorf("unknown MPI flavour %q (want mpich, openmpi or none)", j.Spec.MPI)
	}
	argv = append(argv, j.Spec.Cmd...)
	cmd, err := a.jobCommand(j, k, argv, "", extra)
	if err != nil {
		return -1, err
	}
	// Every rank's SHOAL_NODE must name the node it runs on. The launcher
	// keeps the head's own (Hydra forks the head's proxy without the remote
	// launcher when the name resolves locally, and Open MPI's mpirun is the
	// head's daemon); remote proxies get theirs from their agent. Hydra would
	// overwrite those with mpiexec's environment, so it forwards every
	// variable but SHOAL_NODE (Open MPI forwards only what -x names).
	if j.Spec.MPI == "mpich" {
		var names []string
		for _, kv := range cmd.Env {
			if name, _, _ := strings.Cut(kv, "="); name != "SHOAL_NODE" && name != procMarker && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		prog := len(cmd.Args) - len(j.Spec.Cmd)
		cmd.Args = slices.Concat(cmd.Args[:prog], []string{"-genvlist", strings.Join(names, ",")}, cmd.Args[prog:])
	}
	return a.runStreaming(ctx, k, cmd, stdout, stderr)
}

func lookFirst(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return names[len(names)-1]
}

// runCopies is --mpi none: NP copies of the command across the allocation,
// each told its rank, the size and the hosts. The job's exit status is the
// first non-zero status of a copy, or 0.
func (a *Agent) runCopies(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, stdout, stderr io.Writer) (int, error) {
	var hosts []string
	for _, h := range att.Hosts {
		hosts = append(hosts, h.Node)
	}
	so, se := &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	type result struct {
		code int
		err  error
	}
	np := att.NP()
	results := make(chan result, np)
	extra := a.jobEnv(j, att, jobKey{Job: j.ID, Attempt: att.N})
	rank := 0
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, h := range att.Hosts {
		for range h.Procs {
			req := api.ExecRequest{Job: j.ID, Attempt: att.N, Node: h.Node, Argv: j.Spec.Cmd, Env: append([]string{
				"SHOAL_RANK=" + strconv.Itoa(rank), "SHOAL_SIZE=" + strconv.Itoa(np), "SHOAL_HOSTS=" + strings.Join(hosts, ","),
			}, extra...)}
			rank++
			go func() {
				code, err := a.execOn(ctx, req, so, se)
				results <- result{code, err}
			}()
		}
	}
	code := 0
	var firstErr error
	for range np {
		r := <-results
		if r.err != nil && firstErr == nil {
			firstErr = r.err
			cancel() // one copy could not run: stop the others
		}
		if r.code != 0 && code == 0 {
			code = r.code
		}
	}
	if firstErr != nil {
		return -1, firstErr
	}
	return code, nil
}

// execOn runs an exec request on its node through that node's agent.
func (a *Agent) execOn(ctx context.Context, req api.ExecRequest, stdout, stderr io.Writer) (int, error) {
	base, err := a.httpAddrOf(req.Node)
	if err != nil {
		return -1, err
	}
	c := &api.Client{Base: base, HTTP: a.streamClient}
	return c.Exec(ctx, req, stdout, stderr)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// bin is the shoal executable for `shoal rsh`.
func (a *Agent) bin() string {
	if a.cfg.Bin != "" {
		return a.cfg.Bin
	}
	p, err := os.Executable()
	if err != nil {
		return "shoal"
	}
	return p
}

// localAddr is this agent's API as processes on this node reach it.
func (a *Agent) localAddr() string {
	return "https://" + loopbackOr(a.cfg.BindAddr) + ":" + strconv.Itoa(a.HTTPPort())
}

func loopbackOr(bind string) string {
	if bind == "0.0.0.0" || bind == "::" || bind == "" {
		return "127.0.0.1"
	}
	return bind
}

// unreachable lists the attempt's nodes whose agents do not answer a
// health check within two seconds.
func (a *Agent) unreachable(ctx context.Context, att *raftfsm.Attempt) []string {
	var mu sync.Mutex
	var lost []string
	var wg sync.WaitGroup
	for _, h := range att.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base, err := a.httpAddrOf(h.Node)
			if err == nil {
				hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = a.peerClient(base).Health(hctx)
				cancel()
			}
			if err == nil {
				if e, ok := a.gossip.Node(h.Node); ok && (e.Status == "dead" || e.Status == "left") {
					err = fmt.Errorf("%s", e.Status)
				}
			}
			if err != nil {
				mu.Lock()
				lost = append(lost, h.Node)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(lost)
	return lost
}

// jobEnv is what shoal adds to the environment of every process of an attempt: the job
// capability (for `shoal progress` and `shoal rsh`) and, for an elastic job, the checkpoint
// protocol's variables (issue 8).
func (a *Agent) jobEnv(j *raftfsm.Job, att *raftfsm.Attempt, k jobKey) []string {
	env := []string{"SHOAL_JOB_CAP=" + a.jobCapability(k), "SHOAL_NP=" + strconv.Itoa(att.NP())}
	if e := j.Spec.Elastic; e != nil {
		restart := "0"
		if restarting(j, att) {
			restart = "1"
		}
		env = append(env, "SHOAL_CHECKPOINT_DIR="+a.checkpointDir(j), "SHOAL_RESTART="+restart,
			"SHOAL_ITERATIONS="+strconv.FormatInt(e.Iterations, 10))
	}
	return env
}

// makeCheckpointDir creates the job's checkpoint directory as the job's
// owner: the path is the user's choice (--checkpoint-dir, or a
// .shoal-checkpoints in their working directory that may be a symlink),
// so it is created with their permissions, never root's.
func (a *Agent) makeCheckpointDir(j *raftfsm.Job) error {
	dir := a.checkpointDir(j)
	if err := a.asOwner(j.Owner, dir, ""); err != nil {
		return fmt.Errorf("create checkpoint dir %s: %w (give the job a --workdir or --checkpoint-dir its owner may write)", dir, err)
	}
	return nil
}
