package jobexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-hpc/shoal/internal/procstat"
	"github.com/shoal-hpc/shoal/internal/swapfile"
)

// The supervisor's state directory holds two files, each written whole
// under a temporary name and renamed into place: recordFile, written
// before the job starts, and statusFile, once it has ended. The directory
// belongs to the agent's user with mode 0700, in the agent's data
// directory, which no job's user can reach: a job cannot forge its own
// end. Readers check that again (ReadState).
const (
	recordFile = "supervisor.json"
	statusFile = "status.json"
)

// Record names a supervisor process: its pid and its start time in clock
// ticks since boot (/proc/PID/stat), so that a pid the kernel has reused
// since is not taken for it.
type Record struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start_ticks"`
}

// Status is how a supervised job ended.
type Status struct {
	// ExitCode is the job's exit status, or 128 plus the signal that
	// killed it.
	ExitCode int `json:"exit_code"`
	// Signal is the signal that killed the job; 0 when it exited.
	Signal int `json:"signal,omitempty"`
}

// PrepareStateDir creates a supervisor's state directory: the agent's own,
// mode 0700. A directory already there from an earlier attempt start is
// emptied of its records.
func PrepareStateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("supervisor state dir: %w", err)
	}
	// Through a descriptor that refuses a link: a chmod by name would
	// follow one, and change the mode of whatever it points to before
	// checkStateDir refused it.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("supervisor state dir %s: %w", dir, err)
	}
	err = unix.Fchmod(fd, 0o700)
	unix.Close(fd)
	if err != nil {
		return fmt.Errorf("supervisor state dir %s: %w", dir, err)
	}
	if err := checkStateDir(dir); err != nil {
		return err
	}
	for _, f := range []string{recordFile, statusFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("supervisor state dir: %w", err)
		}
	}
	return nil
}

// checkStateDir refuses a state directory that is a link, is not this
// process's user's, or that anyone else may write or enter.
func checkStateDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("supervisor state dir %s: %w", dir, err)
	}
	if err := ownedPrivate(st, unix.S_IFDIR); err != nil {
		return fmt.Errorf("supervisor state dir %s: %w", dir, err)
	}
	return nil
}

// ownedPrivate checks that a file is of type typ, belongs to this
// process's user, and gives nobody else any access.
func ownedPrivate(st unix.Stat_t, typ uint32) error {
	switch {
	case st.Mode&unix.S_IFMT != typ:
		return fmt.Errorf("not a %s (mode %o)", typeName(typ), st.Mode)
	case st.Uid != uint32(os.Geteuid()):
		return fmt.Errorf("owned by uid %d, not %d", st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		return fmt.Errorf("mode %04o lets others in", st.Mode&0o7777)
	}
	return nil
}

func typeName(typ uint32) string {
	if typ == unix.S_IFDIR {
		return "directory"
	}
	return "regular file"
}

// writeStateFile writes v as name in dir, atomically.
func writeStateFile(dir, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("supervisor %s: %w", name, err)
	}
	// The supervisor's records outlive the agent, not the machine: see
	// package swapfile for why they are not synced.
	if err := swapfile.Write(dir, name, b); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	return nil
}

// readStateFile reads name in dir into v; ok is false when it is not
// there. A file that is a link, or that is not the agent's user's alone,
// is an error, never read.
func readStateFile(dir, name string, v any) (ok bool, err error) {
	fd, err := unix.Open(filepath.Join(dir, name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("supervisor %s: %w", filepath.Join(dir, name), err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, fmt.Errorf("supervisor %s: %w", filepath.Join(dir, name), err)
	}
	if err := ownedPrivate(st, unix.S_IFREG); err != nil {
		return false, fmt.Errorf("supervisor %s: %w", filepath.Join(dir, name), err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return false, fmt.Errorf("supervisor %s: %w", filepath.Join(dir, name), err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("supervisor %s: %w", filepath.Join(dir, name), err)
	}
	return true, nil
}

// State is what a supervisor's state directory says of its attempt.
type State struct {
	// Record names the supervisor; nil when it never wrote one (it did not
	// start).
	Record *Record
	// Alive is whether that supervisor still runs.
	Alive bool
	// Status is how the job ended; nil while it runs, or when the
	// supervisor died without saying (killed with its job).
	Status *Status
}

// ReadState reads a supervisor's state directory. The status is read
// after the liveness check: a supervisor that writes it and exits in
// between is seen dead with a status, never dead without one.
func ReadState(dir string) (State, error) {
	if err := checkStateDir(dir); err != nil {
		return State{}, err
	}
	var s State
	var r Record
	ok, err := readStateFile(dir, recordFile, &r)
	if err != nil || !ok {
		return s, err
	}
	s.Record = &r
	s.Alive = Alive(r)
	var st Status
	if ok, err = readStateFile(dir, statusFile, &st); err != nil {
		return s, err
	}
	if ok {
		s.Status = &st
	}
	return s, nil
}

// Alive reports whether the process r names runs: its pid exists, has
// not exited (a zombie has), and started when r says.
func Alive(r Record) bool {
	if r.PID <= 0 {
		return false
	}
	st, err := procstat.Read(r.PID)
	return err == nil && st.Start == r.Start && st.State != 'Z' && st.State != 'X'
}

// procStartTime is a process's start time in clock ticks since boot.
func procStartTime(pid int) (uint64, error) {
	st, err := procstat.Read(pid)
	if err != nil {
		return 0, fmt.Errorf("start time of pid %d: %w", pid, err)
	}
	return st.Start, nil
}

// ErrStopped is WaitExit's answer when it was told to stop waiting.
var ErrStopped = errors.New("stopped waiting for the supervisor")

// WaitExit blocks until the process r names has exited, or returns at
// once if it has (or is not r's any more). It waits on a pidfd, which
// works for a process that is not this one's child: an adopted
// supervisor's parent is init. Where no pidfd can be had (a kernel before
// Linux 5.3, a seccomp filter in a container, no file descriptor left) it
// polls Alive instead: a supervisor that still runs is never reported
// ended. Its only error is ErrStopped, once cancel is closed.
func WaitExit(r Record, cancel <-chan struct{}) error {
	return waitExit(r, cancel, unix.PidfdOpen)
}

// alivePoll is how often waitExit looks at a supervisor it cannot watch
// through a pidfd, and how often it looks at cancel while it can.
const alivePoll = 200 * time.Millisecond

// waitExit is WaitExit with its pidfd opener given, so that a kernel
// without pidfds can be tried.
func waitExit(r Record, cancel <-chan struct{}, pidfdOpen func(pid, flags int) (int, error)) error {
	fd, err := pidfdOpen(r.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return pollAlive(r, cancel)
	}
	defer unix.Close(fd)
	// The pidfd names whatever holds the pid now: check it is still r's.
	if !Alive(r) {
		return nil
	}
	for {
		select {
		case <-cancel:
			return ErrStopped
		default:
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(alivePoll/time.Millisecond)) // wakes to see cancel
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return pollAlive(r, cancel)
		}
		if n > 0 {
			return nil
		}
	}
}

// pollAlive waits until r's process is no longer Alive, looking every
// alivePoll: the watch of a supervisor no pidfd can follow.
func pollAlive(r Record, cancel <-chan struct{}) error {
	t := time.NewTicker(alivePoll)
	defer t.Stop()
	for Alive(r) {
		select {
		case <-cancel:
			return ErrStopped
		case <-t.C:
		}
	}
	return nil
}

// Group is the process group of a supervised job: the supervisor's pid.
func (r Record) Group() int { return r.PID }
