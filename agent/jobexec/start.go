package jobexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/shoal-hpc/shoal/internal/spawn"
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

// helperEnv is the whole environment the helper starts with. It runs as
// root until it has changed identity, so nothing of the job's environment
// may reach it: the dynamic loader would honour a job's LD_PRELOAD or
// LD_LIBRARY_PATH, and the Go runtime its GODEBUG, while still root. The
// job's environment travels on a pipe (envFD) and is used only by the
// final exec, after the identity change.
var helperEnv = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}

// Start starts a command made by Command and returns once the helper has
// executed the job (nil) or given up (a *SetupError, after reaping it).
// cmd.Env is the job's environment (nil: none); the helper process itself
// starts with helperEnv only.
func Start(cmd *exec.Cmd) error { return start(cmd, nil) }

// start is Start with, when files is not nil, the socket on which the
// helper hands back the files of Spec.Create (filesFD).
func start(cmd *exec.Cmd, files *os.File) error {
	if len(cmd.ExtraFiles) != 0 {
		return errors.New("job helper: ExtraFiles must be empty (fds 3 and 4 are the helper's pipes)")
	}
	env, err := json.Marshal(cmd.Env)
	if err != nil {
		return fmt.Errorf("job helper environment: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("job helper status pipe: %w", err)
	}
	defer r.Close()
	er, ew, err := os.Pipe()
	if err != nil {
		w.Close()
		return fmt.Errorf("job helper environment pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{w, er}
	if files != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, files)
	}
	cmd.Env = helperEnv
	err = startInCgroup(cmd)
	w.Close()
	er.Close()
	cmd.ExtraFiles = nil
	if err != nil {
		ew.Close()
		return err
	}
	go func() {
		// A helper that failed before reading gets EPIPE here, not us a signal.
		_, _ = ew.Write(env)
		ew.Close()
	}()
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

// startInCgroup starts the helper, on cgroup v2 inside the job's cgroup
// from its first instruction (clone3 with CLONE_INTO_CGROUP). A process
// that joins a cgroup by writing cgroup.procs takes the kernel's cgroup
// threadgroup lock for writing, and the first such write after a quiet
// spell waits for an RCU grace period (10-20 ms on a busy machine, once
// per job process); a process born in the cgroup takes it for reading
// only. The helper still checks that it is in the cgroup, and joins it if
// not: where the kernel or the cgroup refuses (an old kernel, v1), the
// helper starts as before.
func startInCgroup(cmd *exec.Cmd) error {
	fd := bornCgroupFD(cmd)
	if fd < 0 {
		return spawn.Start(cmd) // its Pdeathsig must follow the agent, not a thread
	}
	defer unix.Close(fd)
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	if err := spawn.Start(cmd); err == nil {
		return nil
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = false, 0
	return spawn.Start(cmd)
}

// bornCgroupFD opens the cgroup a helper command made by Command is to be
// started in: its spec's cgroup when that is one cgroup v2 directory.
// -1: none (a command without SysProcAttr is started the ordinary way).
func bornCgroupFD(cmd *exec.Cmd) int {
	if len(cmd.Args) < 2 || cmd.Args[0] != Arg0 || cmd.SysProcAttr == nil {
		return -1
	}
	var s Spec
	if json.Unmarshal([]byte(cmd.Args[1]), &s) != nil || len(s.Cgroup) != 1 {
		return -1
	}
	fd, err := unix.Open(s.Cgroup[0], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		unix.Close(fd)
		return -1
	}
	return fd
}
