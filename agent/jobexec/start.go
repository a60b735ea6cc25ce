package jobexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// SelfExe is the path the helper is started from: the agent's own
// executable, whatever has been done to its file since it started.
const SelfExe = "/proc/self/exe"

// Command returns a command that runs argv under spec through the helper,
// started from exe: a binary that links this package, SelfExe when "".
// The process starts a session of its own: it has no controlling terminal
// (a job cannot reach the terminal of whoever started the agent, e.g. to
// push keystrokes with TIOCSTI), and as the session leader its process
// group is its pid, so kill(-pid) still ends the job's whole group. The
// caller sets Env, Stdin, Stdout and Stderr and starts it with Start.
func Command(exe string, spec Spec, argv []string) (*exec.Cmd, error) {
	if exe == "" {
		exe = SelfExe
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("job helper spec: %w", err)
	}
	return &exec.Cmd{
		Path:        exe,
		Args:        append([]string{Arg0, string(b)}, argv...),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}, nil
}

// Argv is the job's own command line of a command made by Command.
func Argv(cmd *exec.Cmd) []string {
	if len(cmd.Args) >= 2 && cmd.Args[0] == Arg0 {
		return cmd.Args[2:]
	}
	return cmd.Args
}

// SetupError is the helper's reason for not starting a job: the job's
// fault or its owner's (a working directory they cannot enter, a directory
// they may not create), not the agent's.
type SetupError struct{ Reason string }

func (e *SetupError) Error() string { return e.Reason }

// Start starts a command made by Command and returns once the helper has
// executed the job (nil) or given up (a *SetupError, after reaping it).
func Start(cmd *exec.Cmd) error {
	if len(cmd.ExtraFiles) != 0 {
		return errors.New("job helper: ExtraFiles must be empty (fd 3 is the status pipe)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("job helper status pipe: %w", err)
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	cmd.ExtraFiles = nil
	if err != nil {
		return err
	}
	msg, rerr := io.ReadAll(r)
	if rerr == nil && len(msg) == 0 {
		return nil
	}
	_ = cmd.Wait()
	if rerr != nil {
		return fmt.Errorf("job helper status: %w", rerr)
	}
	return &SetupError{Reason: string(msg)}
}

// Run does a spec's filesystem work (Mkdir, RemoveAll) as its user, with no
// command to execute, and waits for it.
func Run(exe string, spec Spec) error {
	cmd, err := Command(exe, spec, nil)
	if err != nil {
		return err
	}
	if err := Start(cmd); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("job helper: %w", err)
	}
	return nil
}
