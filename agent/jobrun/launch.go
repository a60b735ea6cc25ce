package jobrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// runLauncher runs on the head node of a running attempt: it starts the
// MPI launcher (or the plain copies), writes the job's output to the
// attempt's log files, and commits the outcome. A launcher that cannot
// start fails the attempt with the reason instead of hanging.
func (n *Node) runLauncher(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt) {
	k := Key{Job: j.ID, Attempt: att.N}
	log := n.log.With("job", j.ID, "attempt", att.N)
	boots := n.hostBoots(ctx, att)
	if err := n.awaitLease(ctx); err != nil {
		if ctx.Err() != nil {
			return
		}
		// Not the job's fault: the attempt is retried, on this node or another.
		log.Warn("not launching without a lease", "err", err)
		n.proposeOutcome(ctx, log, k, raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Retry: true, Reason: err.Error()})
		return
	}
	code, reason, noLease := n.launch(ctx, j, att, k)
	launchtrace.Mark(ctx, n.log, launchtrace.Exited, k.Job, k.Attempt, n.now())
	if ctx.Err() != nil {
		return // the agent is stopping; the leader fails the attempt when it sees us gone
	}
	if code != 0 || reason != "" {
		n.waitOOM(ctx, j, k)
	}
	var typ string
	var body any
	// A node that dies under a job usually makes the launcher fail before
	// gossip declares it dead. Blame the program only when every node of
	// the attempt still answers; otherwise the attempt is requeued.
	checkpointed := code == raftfsm.ExitCheckpointed && reason == "" && j.Spec.Elastic != nil
	if noLease {
		// Not the job's fault either: this node's lease lapsed between the
		// wait above and the attempt's start (a node starting hundreds of
		// tasks at once can starve its renewals), and nothing of the
		// attempt started. It is retried, on this node or another.
		log.Warn("attempt not started: the lease lapsed", "reason", reason)
		typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Reason: reason, Retry: true}
	} else if (reason != "" || code != 0) && !checkpointed {
		if lost := n.unreachable(ctx, att); len(lost) > 0 {
			reason = fmt.Sprintf("lost node(s) %v during attempt %d", lost, att.N)
			log.Warn("attempt lost nodes", "nodes", lost)
			typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: j.ID, Attempt: att.N, Reason: reason, Retry: true, Lost: lost}
		} else if back := n.restartedHosts(ctx, boots); len(back) > 0 {
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
	n.reportOutcome(ctx, log, k, typ, body)
}

// reportOutcome proposes attempt k's outcome and, once raft has answered
// (committed or refused), removes its supervisor's records, which a later
// life would report again. An agent that stops before the answer keeps
// them: its next life reports the recorded end, where without them it
// could only fail the attempt with retry and run a finished job again.
func (n *Node) reportOutcome(ctx context.Context, log *slog.Logger, k Key, typ string, body any) {
	if n.proposeOutcome(ctx, log, k, typ, body) {
		n.forgetSupervisor(k)
	}
}

// proposeOutcome commits attempt k's outcome, once the attempt's own
// commits under way have settled. It reports whether raft answered: false
// when ctx ended first.
func (n *Node) proposeOutcome(ctx context.Context, log *slog.Logger, k Key, typ string, body any) bool {
	b, _ := raftfsm.Encode(typ, n.now(), body)
	settle, cancel := context.WithTimeout(ctx, settleWait)
	n.d.Settle(settle, k)
	cancel()
	// The outcome must reach raft whatever happens to the leader meanwhile:
	// retry until it is committed or refused.
	for ctx.Err() == nil {
		res, err := n.d.Propose(ctx, b)
		if err == nil {
			if res.Err != "" {
				log.Info("outcome not recorded", "err", res.Err) // e.g. the job was killed meanwhile
			} else {
				launchtrace.Mark(ctx, n.log, launchtrace.OutcomeCommitted, k.Job, k.Attempt, n.now())
			}
			return true
		}
		log.Warn("record attempt outcome, retrying", "err", err)
	}
	return false
}

// settleWait bounds the wait for an attempt's own commits under way
// (Deps.Settle) before its outcome: a commit that cannot finish by then
// (no leader) is not worth holding the outcome for.
const settleWait = 5 * time.Second

// launch runs attempt k on this head and returns its exit code, or why it
// failed to run; noLease is set when it started nothing because this node
// held no lease (ErrNoLease): not the job's fault.
func (n *Node) launch(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, k Key) (code int, reason string, noLease bool) {
	dir := n.AttemptDir(k)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return -1, "create log dir: " + err.Error(), false
	}
	stdout, err := openAttemptLog(filepath.Join(dir, "stdout"))
	if err != nil {
		return -1, "create log: " + err.Error(), false
	}
	defer stdout.Close()
	stderr, err := openAttemptLog(filepath.Join(dir, "stderr"))
	if err != nil {
		return -1, "create log: " + err.Error(), false
	}
	defer stderr.Close()
	if err := n.procs.fence(k); err != nil {
		return -1, err.Error(), false
	}
	outW, errW, finish, err := n.outputFiles(ctx, j, stdout, stderr)
	if err != nil {
		return -1, err.Error(), false
	}
	code, reason, noLease = n.launchWith(ctx, j, att, k, outW, errW)
	// A job whose --output could not be written in full has not done what
	// it was asked: the file is part of its result.
	if err := finish(); err != nil && reason == "" {
		return -1, err.Error(), false
	}
	return code, reason, noLease
}

// launchWith runs attempt k's launcher with its output going to outW and errW.
func (n *Node) launchWith(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, k Key, outW, errW io.Writer) (int, string, bool) {
	var err error
	if j.Spec.Elastic != nil {
		if err := n.makeCheckpointDir(j); err != nil {
			return -1, err.Error(), false
		}
	}
	if j.Spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, j.Spec.Timeout)
		defer cancel()
	}
	var code int
	if j.Spec.Batch {
		code, err = n.runBatch(ctx, j, att, k, outW, errW)
	} else if j.Spec.MPI == string(Copies) || j.Spec.MPI == "" {
		code, err = n.runCopies(ctx, j, att, outW, errW)
	} else {
		code, err = n.runMPI(ctx, j, att, k, outW, errW)
	}
	if err != nil {
		// A node without a lease refuses before anything of the attempt
		// starts here (requireLease in cgroupDirs).
		return -1, err.Error(), errors.Is(err, ErrNoLease)
	}
	if j.Spec.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return -1, fmt.Sprintf("timed out after %v", j.Spec.Timeout), false
	}
	return code, "", false
}

// runMPI starts mpiexec (MPICH's Hydra) or mpirun (Open MPI) with shoal rsh
// as the remote launcher, through a small wrapper that carries the
// attempt's capability: MPI launchers take one executable path.
func (n *Node) runMPI(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, k Key, stdout, stderr io.Writer) (int, error) {
	cred, home, err := n.credentialFor(j.Owner)
	if err != nil {
		return -1, err
	}
	capFile, err := n.capabilityFile(j, att, cred)
	if err != nil {
		return -1, err
	}
	script := wrapperScript(capFile, n.cfg.Socket, n.cfg.LocalAddr, n.cfg.CAFile, n.cfg.CACerts, n.execBin())
	tmp, wrapper, err := n.writeLauncherWrapper(k, script, cred)
	if err != nil {
		return -1, err
	}
	defer os.RemoveAll(tmp) // root's own directory (writeLauncherWrapper)
	extra := n.jobEnv(j, att, k)
	// SHOAL_HOSTFILE: the allocation in the flavour's hostfile format, on the head.
	mpich, ompi := hostfiles(att)
	hosts := mpich
	if Flavour(j.Spec.MPI) == OpenMPI {
		hosts = ompi
	}
	hostfile, err := writeOwnedFile(tmp, "hosts", hosts, cred)
	if err != nil {
		return -1, err
	}
	extra = append(extra, "SHOAL_HOSTFILE="+hostfile)
	// Every rank's SHOAL_NODE must name the node it runs on. The launcher
	// keeps the head's own (Hydra forks the head's proxy without the remote
	// launcher when the name resolves locally, and Open MPI's mpirun is the
	// head's daemon); remote proxies get theirs from their agent.
	env := append(n.processEnv(j, k, home, extra), CapFileVar+"="+capFile)
	if Flavour(j.Spec.MPI) == OpenMPI && !slices.ContainsFunc(j.Spec.Env, func(kv string) bool {
		return strings.HasPrefix(kv, prrteBindVar+"=")
	}) {
		env = append(env, prrteBindNone) // mpirun's own: not forwarded to the ranks
	}
	l, err := BuildLaunch(LaunchInput{Spec: &j.Spec, Attempt: att, JobEnv: extra, HeadEnv: env,
		Paths:     LaunchPaths{Launcher: launcherPath(Flavour(j.Spec.MPI)), Wrapper: wrapper},
		AllowRoot: os.Geteuid() == 0 && cred == nil})
	if err != nil {
		return -1, err
	}
	cgroup, err := n.cgroupDirs(j, k)
	if err != nil {
		return -1, err
	}
	cmd, err := n.command(cred, cgroup, j.Spec.Workdir, l.Argv, env)
	if err != nil {
		return -1, err
	}
	if Flavour(j.Spec.MPI) == MPICH && !j.Spec.Stdin {
		null, err := hydraNoStdin()
		if err != nil {
			return -1, err
		}
		defer null.Close()
		cmd.Stdin = null
	}
	return n.runWithStdin(ctx, j, k, cmd, stdout, stderr)
}

// hydraNoStdin opens the standard input of an MPICH mpiexec that forwards
// none: the null device, write-only. Hydra probes its standard input with
// read(0, NULL, 0) and, where that fails, tells rank 0's proxy "end of
// input" at once while the proxy connects. A readable null device instead
// is polled with the proxies, and when rank 0's proxy reports its exit in
// the same poll as the device's end of file, Hydra (4.0) closes the proxy's
// socket first and then writes the end of file to it: "write error (Bad
// file descriptor)", exit 255 after a good run. Ranks that read their
// standard input get end of file either way.
func hydraNoStdin() (*os.File, error) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s for mpiexec's standard input: %w", os.DevNull, err)
	}
	return f, nil
}

// runWithStdin runs a launcher whose standard input, for a `shoal run`
// job, is what its client sends (stdin.go); the launcher gives it to rank 0.
func (n *Node) runWithStdin(ctx context.Context, j *raftfsm.Job, k Key, cmd *exec.Cmd, stdout, stderr io.Writer) (int, error) {
	in, done, err := n.openStdin(j, k)
	if err != nil {
		return -1, err
	}
	defer done()
	if in != nil {
		cmd.Stdin = in
		defer in.Close()
	}
	return n.RunStreaming(ctx, k, cmd, stdout, stderr)
}

// runBatch runs a batch script once, on the head, as sbatch does: with the
// allocation described in its environment (allocationEnv), the hostfiles
// written beside the attempt's remote shell, and the variables that make
// mpiexec and mpirun inside it launch on the allocation through shoal rsh
// (stepEnv): the job steps.
func (n *Node) runBatch(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, k Key, stdout, stderr io.Writer) (int, error) {
	cred, home, err := n.credentialFor(j.Owner)
	if err != nil {
		return -1, err
	}
	capFile, err := n.capabilityFile(j, att, cred)
	if err != nil {
		return -1, err
	}
	script := wrapperScript(capFile, n.cfg.Socket, n.cfg.LocalAddr, n.cfg.CAFile, n.cfg.CACerts, n.execBin())
	tmp, wrapper, err := n.writeLauncherWrapper(k, script, cred)
	if err != nil {
		return -1, err
	}
	defer os.RemoveAll(tmp)
	mpich, ompi := hostfiles(att)
	in := StepInput{Flavour: Flavour(j.Spec.MPI), Wrapper: wrapper, Degraded: att.Degraded, AllowRoot: os.Geteuid() == 0 && cred == nil}
	if in.MPICHHosts, err = writeOwnedFile(tmp, "hosts.mpich", mpich, cred); err != nil {
		return -1, err
	}
	if in.OpenMPIHosts, err = writeOwnedFile(tmp, "hosts.openmpi", ompi, cred); err != nil {
		return -1, err
	}
	env := append(n.processEnv(j, k, home, append(n.jobEnv(j, att, k), stepEnv(in)...)), CapFileVar+"="+capFile)
	// Steps are a record, not a condition of the job: without the socket
	// (a TMPDIR too long for a socket's path), the script runs unrecorded.
	if steps, stepVars, err := n.serveSteps(ctx, tmp, k, att, cred, env); err != nil {
		n.log.Warn("batch steps will not be recorded", "job", k.Job, "attempt", k.Attempt, "err", err)
	} else {
		defer steps.close(5 * time.Second)
		env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }), stepVars...)
	}
	cgroup, err := n.cgroupDirs(j, k)
	if err != nil {
		return -1, err
	}
	cmd, err := n.command(cred, cgroup, j.Spec.Workdir, j.Spec.Cmd, env)
	if err != nil {
		return -1, err
	}
	return n.runWithStdin(ctx, j, k, cmd, stdout, stderr)
}

// launcherPath finds a flavour's launcher: the flavour's own name first
// (Debian installs both as alternatives), the generic one last.
func launcherPath(f Flavour) string {
	switch f {
	case MPICH:
		return lookFirst("mpiexec.mpich", "mpiexec.hydra", "mpiexec")
	case OpenMPI:
		return lookFirst("mpirun.openmpi", "mpirun")
	}
	return ""
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
//
// SHOAL_HOSTFILE (MPICH's format) is written on the head, as for MPI jobs.
// Copy 0 runs on the head (the allocation's first node) without a round
// trip through the HTTP API, so that a `shoal run` job's standard input
// reaches it as an MPI job's reaches rank 0.
func (n *Node) runCopies(ctx context.Context, j *raftfsm.Job, att *raftfsm.Attempt, stdout, stderr io.Writer) (int, error) {
	k := Key{Job: j.ID, Attempt: att.N}
	cred, _, err := n.credentialFor(j.Owner)
	if err != nil {
		return -1, err
	}
	tmp, err := n.attemptTempDir(k)
	if err != nil {
		return -1, err
	}
	defer func() {
		if !n.leftRunning(k) { // the job may still read its hostfile
			_ = os.RemoveAll(tmp)
		}
	}()
	mpich, _ := hostfiles(att)
	hostfile, err := writeOwnedFile(tmp, "hosts", mpich, cred)
	if err != nil {
		return -1, err
	}
	l, err := BuildLaunch(LaunchInput{Spec: &j.Spec, Attempt: att, JobEnv: append(n.jobEnv(j, att, k), "SHOAL_HOSTFILE="+hostfile)})
	if err != nil {
		return -1, err
	}
	so, se := &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	type result struct {
		code int
		err  error
	}
	results := make(chan result, len(l.Copies))
	// A single copy whose output goes straight to the attempt's logs runs
	// under a supervisor and outlives an agent that restarts.
	outF, okOut := stdout.(*os.File)
	errF, okErr := stderr.(*os.File)
	supervise := okOut && okErr && adoptable(j, len(l.Copies))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, c := range l.Copies {
		req := api.ExecRequest{Job: j.ID, Attempt: att.N, Node: c.Node, Argv: c.Argv, Env: c.Env}
		go func() {
			var code int
			var err error
			if i == 0 && c.Node == n.cfg.Name && supervise {
				code, err = n.runSupervisedCopy(ctx, j, k, c, outF, errF)
			} else if i == 0 && c.Node == n.cfg.Name {
				code, err = n.runLocalCopy(ctx, j, k, c, so, se)
			} else {
				code, err = n.execOn(ctx, req, so, se)
			}
			results <- result{code, err}
		}()
	}
	code := 0
	var firstErr error
	for range l.Copies {
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

// runLocalCopy runs copy c of attempt k on this node, the head, with the
// job's standard input when it has one.
func (n *Node) runLocalCopy(ctx context.Context, j *raftfsm.Job, k Key, c Copy, stdout, stderr io.Writer) (int, error) {
	cmd, err := n.Command(j, k, c.Argv, "", c.Env)
	if err != nil {
		return -1, err
	}
	return n.runWithStdin(ctx, j, k, cmd, stdout, stderr)
}

// runSupervisedCopy runs the only copy of attempt k on this node, the head,
// under a supervisor, its output going to the attempt's log files.
func (n *Node) runSupervisedCopy(ctx context.Context, j *raftfsm.Job, k Key, c Copy, stdout, stderr *os.File) (int, error) {
	cmd, err := n.Command(j, k, c.Argv, "", c.Env)
	if err != nil {
		return -1, err
	}
	return n.runSupervised(ctx, k, cmd, stdout, stderr)
}

// execOn runs an exec request on its node through that node's agent.
func (n *Node) execOn(ctx context.Context, req api.ExecRequest, stdout, stderr io.Writer) (int, error) {
	base, err := n.d.HTTPAddrOf(req.Node)
	if err != nil {
		return -1, err
	}
	c := &api.Client{Base: base, HTTP: n.d.StreamClient}
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

// execBin is the binary MPI launchers run as their remote shell.
func (n *Node) execBin() string {
	if n.cfg.Exec != "" {
		return n.cfg.Exec
	}
	return n.bin()
}

// bin is the shoal executable (`shoal step` in batch jobs).
func (n *Node) bin() string {
	if n.cfg.Bin != "" {
		return n.cfg.Bin
	}
	p, err := os.Executable()
	if err != nil {
		return "shoal"
	}
	return p
}

// unreachable lists the attempt's nodes whose agents do not answer a
// health check within two seconds.
func (n *Node) unreachable(ctx context.Context, att *raftfsm.Attempt) []string {
	var mu sync.Mutex
	var lost []string
	var wg sync.WaitGroup
	for _, h := range att.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base, err := n.d.HTTPAddrOf(h.Node)
			if err == nil {
				hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_, err = n.d.PeerClient(base).Health(hctx)
				cancel()
			}
			if err == nil {
				if status, ok := n.d.NodeStatus(h.Node); ok && (status == "dead" || status == "left") {
					err = fmt.Errorf("%s", status)
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
