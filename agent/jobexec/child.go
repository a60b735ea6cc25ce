package jobexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// statusFD is the helper's end of the status pipe (ExtraFiles[0]); envFD
// is the pipe that carries the job's environment (ExtraFiles[1]).
const (
	statusFD = 3
	envFD    = 4
)

// exitSetup is the helper's exit status when it could not start the job;
// the reason is on the status pipe.
const exitSetup = 127

// init turns the process into the helper when the agent started it as one.
// Package initialisation runs on the main OS thread with the goroutine
// locked to it, so the prctl, the identity change and the execve below all
// happen on the thread that becomes the job.
func init() {
	if len(os.Args) < 2 || os.Args[0] != Arg0 {
		return
	}
	os.Exit(helper(os.Args[1], os.Args[2:]))
}

// helper carries out a Spec and executes argv; it returns only on failure
// or when there is nothing to execute.
func helper(specJSON string, argv []string) int {
	syscall.CloseOnExec(statusFD)
	status := os.NewFile(statusFD, "status")
	fail := func(err error) int {
		if _, werr := status.WriteString(err.Error()); werr != nil {
			fmt.Fprintln(os.Stderr, "shoal: "+err.Error())
		}
		return exitSetup
	}
	var s Spec
	if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
		return fail(fmt.Errorf("job helper: bad spec: %w", err))
	}
	var env []string
	if s.Warm {
		// The root part first, then the command: what is slow to start
		// is done before the command is due (warm.go).
		if err := s.setUpRoot(); err != nil {
			return fail(err)
		}
		c, err := takeCommand()
		if err != nil {
			return fail(err)
		}
		argv, env = c.Argv, c.Env
	} else {
		// The job's environment is data until the exec: read it now, apply it
		// only after the identity change.
		envPipe := os.NewFile(envFD, "environment")
		envJSON, err := io.ReadAll(envPipe)
		envPipe.Close()
		if err != nil {
			return fail(fmt.Errorf("job helper: read the job's environment: %w", err))
		}
		if err := json.Unmarshal(envJSON, &env); err != nil {
			return fail(fmt.Errorf("job helper: bad environment: %w", err))
		}
		if err := s.setUpRoot(); err != nil {
			return fail(err)
		}
	}
	if err := s.setUpUser(); err != nil {
		return fail(err)
	}
	if len(s.Create) > 0 {
		if err := s.sendFiles(); err != nil {
			return fail(err)
		}
		return 0
	}
	if len(argv) == 0 {
		return 0
	}
	env = lastWins(env)
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			os.Setenv(k, v)
		}
	}
	path, err := exec.LookPath(argv[0]) // with the job's PATH, as the user
	if err != nil {
		return fail(fmt.Errorf("%s cannot run %s: %w", s.Cred, argv[0], err))
	}
	if err := closeInherited(); err != nil {
		return fail(err)
	}
	err = syscall.Exec(path, argv, env)
	return fail(fmt.Errorf("%s cannot run %s: %w", s.Cred, path, err))
}

// lastWins is env with one entry per name, the last one given, where the
// last one stood, as os/exec makes a command's environment. The agent puts
// its own variables after the job's (SHOAL_JOB_CAP_FILE after a --env of
// the same name), and getenv(3) would take the first.
func lastWins(env []string) []string {
	seen := make(map[string]bool, len(env))
	out := make([]string, 0, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(env[i], "=")
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, env[i])
	}
	slices.Reverse(out)
	return out
}

// setUpRoot and setUpUser do everything but the exec, in the order the
// package comment gives: the cgroup and what else needs root first, then
// the identity, then the paths.
func (s *Spec) setUpRoot() error {
	if err := joinCgroups(s.Cgroup); err != nil {
		return err
	}
	for _, l := range s.Limits {
		if err := setLimit(l); err != nil {
			return err
		}
	}
	if s.OOMScoreAdj != nil {
		if err := setOOMScoreAdj(*s.OOMScoreAdj); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) setUpUser() error {
	if c := s.Cred; c != nil {
		groups := make([]int, len(c.Groups))
		for i, g := range c.Groups {
			groups[i] = int(g)
		}
		// The syscall package changes the identity of every thread of the
		// process (Linux credentials are per thread).
		if err := syscall.Setgroups(groups); err != nil {
			return fmt.Errorf("set the groups of %s: %w", c, err)
		}
		if err := syscall.Setgid(int(c.GID)); err != nil {
			return fmt.Errorf("set the group of %s: %w", c, err)
		}
		if err := syscall.Setuid(int(c.UID)); err != nil {
			return fmt.Errorf("become %s: %w", c, err)
		}
	}
	if s.Parent != 0 {
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
			return fmt.Errorf("set the parent-death signal: %w", err)
		}
		if os.Getppid() != s.Parent {
			return errors.New("the agent is gone")
		}
	}
	if s.Mkdir != "" {
		if err := os.MkdirAll(s.Mkdir, 0o700); err != nil {
			return fmt.Errorf("%s cannot create %s: %w", s.Cred, s.Mkdir, err)
		}
	}
	if s.RemoveAll != "" {
		if err := os.RemoveAll(s.RemoveAll); err != nil {
			return fmt.Errorf("%s cannot remove %s: %w", s.Cred, s.RemoveAll, err)
		}
	}
	if s.Dir != "" {
		if err := s.enterDir(); err != nil {
			return workdirError(s.Dir, s.Cred, err)
		}
	}
	return nil
}

// enterDir makes Dir the working directory. A helper that keeps root's
// identity to open output files resolves it as it resolves the files
// (openDirNoUserLinks) and enters the directory it reached: the files are
// opened from "." and a user's link above them must not move "." either.
func (s *Spec) enterDir() error {
	if len(s.Create) == 0 || os.Geteuid() != 0 {
		return os.Chdir(s.Dir)
	}
	fd, err := openDirNoUserLinks(s.Dir)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchdir(fd)
}

// setOOMScoreAdj sets the process's OOM score adjustment. Raising it is
// always allowed; lowering it below what a privileged process set needs
// CAP_SYS_RESOURCE, which an agent that is not root lacks: the job then
// keeps the agent's higher score, which makes it no harder to kill.
func setOOMScoreAdj(v int) error {
	const path = "/proc/self/oom_score_adj"
	err := os.WriteFile(path, []byte(strconv.Itoa(v)), 0)
	if err != nil && (errors.Is(err, fs.ErrPermission)) {
		if b, rerr := os.ReadFile(path); rerr == nil {
			if cur, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && cur >= v {
				return nil
			}
		}
	}
	if err != nil {
		return fmt.Errorf("set the job's oom_score_adj to %d: %w", v, err)
	}
	return nil
}

// setLimit sets one limit. An agent that is not root cannot raise a hard
// limit above its own: the job then gets the agent's hard limit.
func setLimit(l Rlimit) error {
	res, ok := resourceNumber(l.Resource)
	if !ok {
		return fmt.Errorf("job rlimit: unknown resource %q", l.Resource)
	}
	want := unix.Rlimit{Cur: l.Cur, Max: l.Max}
	err := unix.Setrlimit(res, &want)
	if errors.Is(err, unix.EPERM) {
		var have unix.Rlimit
		if unix.Getrlimit(res, &have) == nil && want.Max > have.Max {
			want.Max = have.Max
			want.Cur = min(want.Cur, want.Max)
			err = unix.Setrlimit(res, &want)
		}
	}
	if err != nil {
		return fmt.Errorf("set the job's %s limit to %s: %w", l.Resource, l, err)
	}
	return nil
}

// workdirError says which directory the user cannot enter and why: the
// first component of the path the user cannot search or that is missing.
func workdirError(dir string, c *Cred, err error) error {
	why := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err
	}
	blocker := ""
	if filepath.IsAbs(dir) && errors.Is(err, fs.ErrPermission) {
		for p := dir; ; p = filepath.Dir(p) {
			parent := filepath.Dir(p)
			if parent == p {
				break
			}
			if _, serr := os.Stat(parent); serr == nil && unix.Access(parent, unix.X_OK) != nil {
				blocker = parent
			}
		}
		if blocker == "" {
			blocker = dir
		}
		if fi, serr := os.Stat(blocker); serr == nil {
			st, _ := fi.Sys().(*syscall.Stat_t)
			if st != nil {
				return fmt.Errorf("working directory %s: %s may not enter %s (mode %04o, owner uid %d, group gid %d): %w",
					dir, c, blocker, uint32(fi.Mode().Perm()), st.Uid, st.Gid, why)
			}
		}
	}
	return fmt.Errorf("working directory %s: %s cannot enter it: %w", dir, c, why)
}

// closeInherited marks every descriptor above standard error close-on-exec,
// so that the job gets 0, 1 and 2 only. The agent's children inherit every
// descriptor it holds without close-on-exec, which includes whatever the
// agent itself inherited from whoever started it (a shell's `5>file`, a
// supervisor's leaked socket): a job once wrote into a root-only file
// through one. The helper's own status pipe is close-on-exec already and
// must stay open until the exec, so descriptors are marked, not closed.
// close_range(2) does it in one call (Linux 5.11); older kernels get the
// same from /proc/self/fd.
func closeInherited() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("job helper: close inherited descriptors: %w", err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("job helper: list inherited descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The directory's own descriptor is gone by now: EBADF is fine.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("job helper: close inherited descriptor %d: %w", fd, err)
		}
	}
	return nil
}
