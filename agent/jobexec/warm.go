package jobexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A warm helper is a job helper started before its command is known: it
// does the part of its spec that does not depend on the command (the
// cgroup, the limits, the OOM score; all of it as root, none of it visible
// to the job) and then waits. The command, its environment and its three
// standard streams come later on a socket (fd 4) from the agent alone;
// the helper then changes identity, enters the working directory and
// executes the command exactly as a helper started with it would. Starting
// a process and joining a cgroup (on cgroup v1 a write that waits for an
// RCU grace period) then happen while the attempt waits for its other
// hosts, not when its processes are due.

// ErrWarmGone is returned by Warm.Start when the warm helper exited before
// it took the command (its cgroup was killed, it failed its setup): nothing
// of the command started, and the caller may start it the ordinary way.
var ErrWarmGone = errors.New("the warm job helper is gone")

// ErrWarmSpec is returned by Warm.Start for a command whose spec is not the
// one the warm helper was started with.
var ErrWarmSpec = errors.New("the command's spec is not the warm job helper's")

// Warm is a job helper waiting for its command.
type Warm struct {
	cmd    *exec.Cmd
	spec   string // the spec, as Command encodes it, a command must carry
	ctl    *net.UnixConn
	status *os.File
}

// warmCommand is what the agent sends a warm helper after the descriptors.
type warmCommand struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

// StartWarm starts a helper, from exe as Command does, that carries out the
// root part of spec and waits for a command given to Start.
func StartWarm(exe string, spec Spec) (*Warm, error) {
	plain, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("job helper spec: %w", err)
	}
	spec.Warm = true
	cmd, err := Command(exe, spec, nil)
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("warm job helper socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "warm-helper"), os.NewFile(uintptr(fds[1]), "warm-helper")
	defer theirs.Close()
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("warm job helper socket: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("job helper status pipe: %w", err)
	}
	cmd.ExtraFiles = []*os.File{w, theirs}
	cmd.Env = helperEnv
	err = startInCgroup(cmd)
	w.Close()
	cmd.ExtraFiles = nil
	if err != nil {
		r.Close()
		conn.Close()
		return nil, err
	}
	return &Warm{cmd: cmd, spec: string(plain), ctl: conn.(*net.UnixConn), status: r}, nil
}

// Pid is the warm helper's process, which becomes the command's.
func (w *Warm) Pid() int { return w.cmd.Process.Pid }

// Close ends a warm helper that was not given a command: it is killed and
// reaped.
func (w *Warm) Close() {
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
	w.ctl.Close()
	w.status.Close()
}

// Start hands cmd, made by Command with the spec the helper was started
// with, to the warm helper and returns, as Start does, once the helper has
// executed it (nil) or given up (a *SetupError). cmd.Process is then the
// helper's; wait is cmd.Wait's counterpart, honouring cmd.WaitDelay, and
// cmd.Wait must not be called. ErrWarmGone and ErrWarmSpec mean nothing
// started: the caller may Start cmd itself (after Close for ErrWarmSpec).
func (w *Warm) Start(cmd *exec.Cmd) (wait func() error, err error) {
	if len(cmd.Args) < 2 || cmd.Args[0] != Arg0 || cmd.Args[1] != w.spec {
		return nil, ErrWarmSpec
	}
	// From here the helper is taken: on an error before it has the command,
	// nothing else will close it, and it would wait in the job's cgroup.
	msg, err := json.Marshal(warmCommand{Argv: cmd.Args[2:], Env: cmd.Env})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("job helper environment: %w", err)
	}
	st, err := newStdio(cmd)
	if err != nil {
		w.Close()
		return nil, err
	}
	_, _, err = w.ctl.WriteMsgUnix([]byte{0}, unix.UnixRights(st.childFDs()...), nil)
	st.closeChild()
	if err != nil {
		st.closeParent()
		w.Close()
		return nil, fmt.Errorf("%w: %w", ErrWarmGone, err)
	}
	go func() {
		// A helper that failed before reading gets EPIPE here, not us a signal.
		_, _ = w.ctl.Write(msg)
		w.ctl.Close()
	}()
	st.startCopies()
	cmd.Process = w.cmd.Process
	status, rerr := io.ReadAll(w.status)
	w.status.Close()
	wait = func() error {
		err := w.cmd.Wait()
		cmd.ProcessState = w.cmd.ProcessState
		if gerr := st.await(cmd.WaitDelay); err == nil {
			err = gerr
		}
		return err
	}
	if rerr == nil && len(status) == 0 {
		return wait, nil
	}
	_ = wait()
	if rerr != nil {
		return nil, fmt.Errorf("job helper status: %w", rerr)
	}
	return nil, &SetupError{Reason: string(status)}
}

// stdio is a command's standard streams as os/exec would give them to the
// process: its own *os.File, the null device for nil, or a pipe copied
// by a goroutine for any other reader or writer.
type stdio struct {
	child      [3]*os.File // what the process gets
	closeAfter []*os.File  // of child, the ones made here
	parent     []*os.File  // our ends of the pipes
	copies     []func() error
	errs       chan error
}

func newStdio(cmd *exec.Cmd) (*stdio, error) {
	s := &stdio{}
	fail := func(err error) (*stdio, error) {
		s.closeChild()
		s.closeParent()
		return nil, fmt.Errorf("job helper standard streams: %w", err)
	}
	switch in := cmd.Stdin.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return fail(err)
		}
		s.child[0], s.closeAfter = f, append(s.closeAfter, f)
	case *os.File:
		s.child[0] = in
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		s.child[0], s.closeAfter, s.parent = pr, append(s.closeAfter, pr), append(s.parent, pw)
		s.copies = append(s.copies, func() error {
			_, err := io.Copy(pw, in)
			if cerr := pw.Close(); err == nil {
				err = cerr
			}
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, fs.ErrClosed) {
				err = nil // the process stopped reading: as os/exec, not an error
			}
			return err
		})
	}
	for i, out := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		fd := i + 1
		if fd == 2 && cmd.Stderr != nil && interfaceEqual(cmd.Stderr, cmd.Stdout) {
			s.child[2] = s.child[1]
			continue
		}
		switch o := out.(type) {
		case nil:
			f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				return fail(err)
			}
			s.child[fd], s.closeAfter = f, append(s.closeAfter, f)
		case *os.File:
			s.child[fd] = o
		default:
			pr, pw, err := os.Pipe()
			if err != nil {
				return fail(err)
			}
			s.child[fd], s.closeAfter, s.parent = pw, append(s.closeAfter, pw), append(s.parent, pr)
			s.copies = append(s.copies, func() error {
				_, err := io.Copy(o, pr)
				pr.Close()
				return err
			})
		}
	}
	return s, nil
}

// interfaceEqual is os/exec's test for one writer given as both streams.
func interfaceEqual(a, b any) bool {
	defer func() { _ = recover() }() // an uncomparable type: not equal
	return a == b
}

func (s *stdio) childFDs() []int {
	fds := make([]int, len(s.child))
	for i, f := range s.child {
		fds[i] = int(f.Fd())
	}
	return fds
}

func (s *stdio) closeChild() {
	for _, f := range s.closeAfter {
		f.Close()
	}
	s.closeAfter = nil
}

func (s *stdio) closeParent() {
	for _, f := range s.parent {
		f.Close()
	}
}

func (s *stdio) startCopies() {
	s.errs = make(chan error, len(s.copies))
	for _, c := range s.copies {
		go func() { s.errs <- c() }()
	}
}

// await waits for the copies, as exec.Cmd.Wait does: for at most delay
// (0: for ever), after which our ends of the pipes are closed and the
// result is exec.ErrWaitDelay.
func (s *stdio) await(delay time.Duration) error {
	var timeout <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		timeout = t.C
	}
	var first error
	for range s.copies {
		select {
		case err := <-s.errs:
			if first == nil {
				first = err
			}
		case <-timeout:
			s.closeParent()
			return exec.ErrWaitDelay
		}
	}
	return first
}

// takeCommand is the warm helper's wait: one byte carrying the command's
// three standard streams, which become its 0, 1 and 2, then the command and
// its environment until the agent closes the socket.
func takeCommand() (warmCommand, error) {
	var c warmCommand
	sock := os.NewFile(envFD, "command")
	defer sock.Close()
	oob := make([]byte, unix.CmsgSpace(3*4))
	_, oobn, _, _, err := unix.Recvmsg(envFD, make([]byte, 1), oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return c, fmt.Errorf("job helper: wait for the command: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return c, fmt.Errorf("job helper: the command came without its standard streams (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 3 {
		return c, fmt.Errorf("job helper: want 3 standard streams, got %d (%v)", len(fds), err)
	}
	for i, fd := range fds {
		// Received with close-on-exec; the copy on 0, 1 or 2 has it clear.
		// (0, 1 and 2 are open, the null device, so none arrives there.)
		if err := unix.Dup3(fd, i, 0); err != nil {
			return c, fmt.Errorf("job helper: standard stream %d: %w", i, err)
		}
	}
	for _, fd := range fds {
		if fd > 2 {
			unix.Close(fd)
		}
	}
	b, err := io.ReadAll(sock)
	if err != nil {
		return c, fmt.Errorf("job helper: read the command: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("job helper: bad command: %w", err)
	}
	return c, nil
}
