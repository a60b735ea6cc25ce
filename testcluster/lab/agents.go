package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// AgentArgv is the command line of node's agent: bound to the node's
// address, joining the first BootstrapExpect nodes (other than itself).
func (l *Lab) AgentArgv(node string) ([]string, error) {
	ip, ok := l.TB.Node(node)
	if !ok {
		return nil, fmt.Errorf("agent on %q: %w", node, netns.ErrUnknownNode)
	}
	var sw string
	for _, n := range l.TB.Nodes() {
		if n.Name == node {
			sw = n.Switch
		}
	}
	argv := []string{l.opts.Shoal, "agent",
		"--name", node, "--bind", ip.String(),
		"--data-dir", filepath.Join(l.dir, "data", node),
		"--token-file", l.token,
		"--bootstrap-expect", fmt.Sprint(l.opts.BootstrapExpect),
		"--switch", sw,
		// Tests place jobs right after the lab forms and expect them
		// placed at once; AgentArgs, after it, may turn the wait on.
		"--placement-model-wait", "0",
	}
	joined := 0
	for _, n := range l.TB.Nodes() {
		if joined == l.opts.BootstrapExpect {
			break
		}
		if n.Name == node {
			continue
		}
		argv = append(argv, "--join", n.IP.String())
		joined++
	}
	return append(argv, l.opts.AgentArgs...), nil
}

// StartAgent starts (or restarts, keeping its data directory) node's agent.
// It does not wait for it; see [Lab.WaitAgent].
func (l *Lab) StartAgent(ctx context.Context, node string) error {
	argv, err := l.AgentArgv(node)
	if err != nil {
		return err
	}
	env := append([]string{"SHOAL_TOKEN_FILE=" + l.token}, l.opts.AgentEnv...)
	if l.opts.EmulateLoad {
		dir, err := l.hostProc(node)
		if err != nil {
			return err
		}
		env = append(env, "HOST_PROC="+dir)
	}
	// The agent outlives ctx: the testbed stops it on Close.
	p, err := l.TB.Start(context.WithoutCancel(ctx), node, argv, env)
	if err != nil {
		return fmt.Errorf("start agent on %s: %w", node, err)
	}
	l.mu.Lock()
	l.agents[node] = p
	l.mu.Unlock()
	return nil
}

// WaitAgent waits until node's agent API listens.
func (l *Lab) WaitAgent(ctx context.Context, node string, timeout time.Duration) error {
	if err := l.TB.WaitListening(ctx, node, HTTPPort, timeout); err != nil {
		return fmt.Errorf("agent on %s: %w (log: %s)", node, err, l.agentLog(node))
	}
	return nil
}

// Agent is node's current agent process (nil if none was started).
func (l *Lab) Agent(node string) *netns.Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.agents[node]
}

// KillAgent SIGKILLs node's agent (and its process group: probes, jobs)
// and waits for it to exit: a crash, not a graceful leave.
func (l *Lab) KillAgent(node string) error {
	p := l.Agent(node)
	if p == nil {
		return fmt.Errorf("kill agent on %s: none started", node)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill agent on %s: %w", node, err)
	}
	select {
	case <-p.Done():
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kill agent on %s (pid %d): still running 10s after SIGKILL", node, p.Pid())
	}
}

// agentLog is the tail of node's agent log, for error messages.
func (l *Lab) agentLog(node string) string {
	p := l.Agent(node)
	if p == nil {
		return "(no agent)"
	}
	b, err := os.ReadFile(p.LogPath())
	if err != nil {
		return p.LogPath()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return p.LogPath() + ":\n" + string(b)
}

// AgentLog returns the tail of node's agent log.
func (l *Lab) AgentLog(node string) string { return l.agentLog(node) }
