package jobexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// SupervisorArg0 is the argv[0] under which the agent's executable is an
// attempt's supervisor: the parent of the job helper that outlives the
// agent, waits for the job and records how it ended (Supervise).
const SupervisorArg0 = "shoal-exec-supervise"

// Supervise turns a command made by Command into one that runs under a
// supervisor keeping its records in stateDir (PrepareStateDir): the
// supervisor starts the helper as its child, in its own process group,
// writes its pid and start time to stateDir before it does, waits for
// the job, writes its exit status there, and exits with that status.
// It has no parent-death signal: it and its job outlive an agent that
// stops leaving attempts running, and the agent's next life adopts them
// (AdoptState). The helper's parent-death signal follows the supervisor
// instead, so a job never runs without one. The supervisor is a session
// leader whose process group holds the job: killing the group ends both,
// as it ended the helper's before. Start it with Start; the status pipe
// passes through, so a job that cannot start is reported as before.
func Supervise(cmd *exec.Cmd, stateDir string) error {
	if len(cmd.Args) < 2 || cmd.Args[0] != Arg0 {
		return errors.New("job supervisor: not a job helper command")
	}
	cmd.Args = append([]string{SupervisorArg0, stateDir}, cmd.Args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return nil
}

// init turns the process into a supervisor when the agent started it as one.
func init() {
	if len(os.Args) < 3 || os.Args[0] != SupervisorArg0 {
		return
	}
	os.Exit(supervise(os.Args[1], os.Args[2], os.Args[3:]))
}

// supervise is the supervisor's main: it starts the helper with specJSON
// and argv as its child and records the job's end in stateDir.
func supervise(stateDir, specJSON string, argv []string) int {
	// The agent's kill of the job's group is for the job: the supervisor
	// stays to record its end. Handled, not ignored: an ignored signal
	// would stay ignored in the job.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for range sigs {
		}
	}()
	status := os.NewFile(statusFD, "status")
	envPipe := os.NewFile(envFD, "environment")
	fail := func(err error) int {
		if _, werr := status.WriteString(err.Error()); werr != nil {
			fmt.Fprintln(os.Stderr, "shoal: "+err.Error())
		}
		return exitSetup
	}
	if err := checkStateDir(stateDir); err != nil {
		return fail(err)
	}
	var s Spec
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		return fail(fmt.Errorf("job supervisor: bad spec: %w", err))
	}
	// The helper's parent is the supervisor now: it dies with it, not with
	// the agent.
	s.Parent = os.Getpid()
	b, err := json.Marshal(s)
	if err != nil {
		return fail(fmt.Errorf("job supervisor: spec: %w", err))
	}
	start, err := procStartTime(os.Getpid())
	if err != nil {
		return fail(fmt.Errorf("job supervisor: %w", err))
	}
	if err := writeStateFile(stateDir, recordFile, Record{PID: os.Getpid(), Start: start}); err != nil {
		return fail(err)
	}
	child := &exec.Cmd{
		Path:   SelfExe,
		Args:   append([]string{Arg0, string(b)}, argv...),
		Env:    helperEnv,
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		// Fds 3 and 4 are the agent's status and environment pipes, handed
		// on as they are: the helper reports to the agent itself.
		ExtraFiles: []*os.File{status, envPipe},
		// No Setsid: the job stays in the supervisor's process group.
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	return runHelper(stateDir, child, status, envPipe, startInCgroup)
}

// runHelper starts child, the job's helper, with start, waits for it and
// records its end in stateDir; it returns the supervisor's exit status.
// status and envPipe are the agent's pipes, handed on to the helper.
func runHelper(stateDir string, child *exec.Cmd, status, envPipe *os.File, start func(*exec.Cmd) error) int {
	err := start(child)
	envPipe.Close()
	if err != nil {
		// Said on the status pipe, as a helper that cannot start the job
		// says it: the agent reports it as a setup failure, not as the
		// job's own exit. The status file covers a later life of the agent.
		_ = writeStateFile(stateDir, statusFile, Status{ExitCode: exitSetup})
		msg := "job supervisor: start the job helper: " + err.Error()
		if _, werr := status.WriteString(msg); werr != nil {
			fmt.Fprintln(os.Stderr, "shoal: "+msg)
		}
		status.Close()
		return exitSetup
	}
	status.Close()
	if err := child.Wait(); child.ProcessState == nil {
		// Not waited for: how the job ends is unknown, and it must not run
		// on unwatched. No status is recorded: the attempt is failed and
		// retried, not reported as ended.
		fmt.Fprintln(os.Stderr, "shoal: job supervisor: wait for the job helper: "+err.Error())
		if child.Process != nil {
			_ = child.Process.Kill()
		}
		return exitSetup
	}
	st := statusOf(child.ProcessState)
	if err := writeStateFile(stateDir, statusFile, st); err != nil {
		fmt.Fprintln(os.Stderr, "shoal: "+err.Error())
	}
	return st.ExitCode
}

// statusOf is how a process ended, as a shell reports it: its exit status,
// or 128 plus the signal that killed it.
func statusOf(ps *os.ProcessState) Status {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return Status{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return Status{ExitCode: ps.ExitCode()}
}
