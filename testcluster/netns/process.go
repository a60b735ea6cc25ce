package netns

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// MarkerEnv is set in the environment of every process a testbed runs, to the
// instance prefix; [Leftovers] and [Sweep] find stray processes by it even
// after their namespace is gone.
const MarkerEnv = "SHOAL_NETNS_TESTBED"

// NodeEnv is set to the node's name in every process run on a node.
const NodeEnv = "SHOAL_NETNS_NODE"

// Command returns a command that runs argv on node: in the node's network
// namespace and in its mount and UTS namespaces (where the hostname is the
// node's name, /etc/hosts names every node and /sys shows the node's
// interfaces):
//
//	nsenter --net=/run/netns/NS --mount=M --uts=U --wd=. -- argv...
//
// nsenter execs argv, so the command's pid is argv's; cmd.Dir (or the
// caller's directory) stays the working directory. It runs in a process
// group of its own; cancelling ctx kills the whole group. Its environment is
// the caller's plus [MarkerEnv] and [NodeEnv]; append to cmd.Env to add more.
// An unknown node or an empty argv makes Start/Run return the error.
// Commands are not tracked: wait for them, or use [Testbed.Start]. Close still
// kills any that are left in the node's namespace.
func (tb *Testbed) Command(ctx context.Context, node string, argv ...string) *exec.Cmd {
	n, ok := tb.nodes[node]
	ns := ""
	if ok {
		ns = n.Namespace
	}
	mnt, uts := nodeNSFiles(ns)
	args := []string{"--net=" + filepath.Join(netnsDir, ns), "--mount=" + mnt, "--uts=" + uts, "--wd=.", "--"}
	cmd := exec.CommandContext(ctx, "nsenter", append(args, argv...)...)
	switch {
	case !ok:
		cmd.Err = fmt.Errorf("command on %q: %w", node, ErrUnknownNode)
	case len(argv) == 0:
		cmd.Err = fmt.Errorf("command on %q: empty argv", node)
	}
	cmd.Env = append(os.Environ(), MarkerEnv+"="+tb.prefix, NodeEnv+"="+node)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs argv on node and returns its stdout; the error names the node
// and the command and carries its stderr.
func (tb *Testbed) Run(ctx context.Context, node string, argv ...string) (string, error) {
	cmd := tb.Command(ctx, node, argv...)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("on %s: %s: %w: %s", node, strings.Join(argv, " "), err, stderr.String())
	}
	return string(out), nil
}

// Process is a long-running command started by [Testbed.Start]; the
// testbed kills its process group on Close.
type Process struct {
	node    string
	argv    []string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done is closed
}

// Start runs argv on node in the background, with env appended to the
// environment [Testbed.Command] gives, stdout and stderr going to a log file
// in the testbed's directory ([Process.LogPath]). The process is tracked:
// Close stops its whole process group (SIGTERM, then SIGKILL after
// Options.StopGrace). Cancelling ctx kills the group at once.
func (tb *Testbed) Start(ctx context.Context, node string, argv []string, env []string) (*Process, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.closed {
		return nil, fmt.Errorf("start %v on %s: %w", argv, node, ErrClosed)
	}
	cmd := tb.Command(ctx, node, argv...)
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	cmd.Env = append(cmd.Env, env...)
	tb.seq++
	logPath := filepath.Join(tb.dir, fmt.Sprintf("%s-%03d-%s.log", node, tb.seq, filepath.Base(argv[0])))
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %v on %s: create log: %w", argv, node, err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %v on %s: %w", argv, node, err)
	}
	p := &Process{node: node, argv: argv, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	tb.procs = append(tb.procs, p)
	tb.log.Debug("started", "node", node, "pid", cmd.Process.Pid, "argv", argv, "log", logPath)
	return p, nil
}

// Pid is the process's pid (and process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Node is the node the process runs on.
func (p *Process) Node() string { return p.node }

// LogPath is the file holding the process's stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// Output returns what the process has written so far.
func (p *Process) Output() ([]byte, error) { return os.ReadFile(p.logPath) }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the process exits and returns its exit error.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Signal sends sig to the process's whole group.
func (p *Process) Signal(sig syscall.Signal) error {
	return killGroup(p.Pid(), sig)
}

// Stop sends SIGTERM to the process group, waits up to grace for the
// process to exit, then sends SIGKILL and waits for it. A process that has
// already exited is not an error.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop %v on %s: %w", p.argv, p.node, err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		// The leader may be gone while other members of its group linger.
		_ = killGroup(p.Pid(), syscall.SIGKILL)
		return nil
	case <-t.C:
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %v on %s: %w", p.argv, p.node, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kill %v on %s (pid %d): still running 10s after SIGKILL", p.argv, p.node, p.Pid())
	}
}

// killGroup signals process group pgid; a group that is gone is not an error.
func killGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill -%d -%d: %w", sig, pgid, err)
	}
	return nil
}

// limitedBuffer keeps the first 8 KiB written to it (enough of a stderr for
// an error message).
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 8<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(trimSpace(l.b)) }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
