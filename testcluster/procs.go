package testcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/spawn"
)

// ProcOptions describe a cluster of `shoal agent` OS processes on loopback.
type ProcOptions struct {
	// Bin is the shoal binary. Required.
	Bin string
	// N is the number of agents. Required.
	N int
	// Dir holds each agent's data dir and log, the token and cluster.json.
	Dir string
	// BasePort: agent i uses BasePort+3i (gossip), +1 (raft), +2 (http).
	// Default 17946, clear of a production agent's 7946-7948.
	BasePort int
	// BootstrapExpect defaults to min(N, 3).
	BootstrapExpect int
	// Args are extra flags for every agent.
	Args []string
	// Detach puts agents in their own session so they outlive the caller
	// (the demo); otherwise they die with it.
	Detach bool
	// Token is the cluster token. Empty (the demo, the benchmarks) makes a
	// fresh random one: a token fixed in the source would let every local
	// user of a shared machine act as root on the cluster. Tests that
	// need the token before the cluster exists pass one of NewToken's.
	Token string
}

// ProcNode is one agent process.
type ProcNode struct {
	Name       string `json:"name"`
	PID        int    `json:"pid"`
	GossipPort int    `json:"gossip_port"`
	RaftPort   int    `json:"raft_port"`
	HTTPPort   int    `json:"http_port"`
	DataDir    string `json:"data_dir"`
	Log        string `json:"log"`
	args       []string
}

// ProcCluster is a running set of agent processes.
type ProcCluster struct {
	Opts      ProcOptions `json:"-"`
	TokenFile string      `json:"token_file"`
	Token     string      `json:"-"`
	Nodes     []ProcNode  `json:"nodes"`
	procs     []*os.Process

	// clients are the API clients by agent URL, kept so that a caller
	// polling an agent reuses its connections: a fresh client per call
	// leaves a kept-alive connection behind each time, and the agent's
	// per-source connection cap then refuses the poller until the idle
	// ones time out (a minute), which a benchmark measures as the event.
	clientsMu sync.Mutex
	clients   map[string]*api.Client
}

// StartProcs writes a token and starts N agents, the first N-1 joining
// the one before them. It returns once every process listens; use
// WaitConverged for the cluster itself.
func StartProcs(opts ProcOptions) (*ProcCluster, error) {
	if opts.Bin == "" || opts.N < 1 || opts.Dir == "" {
		return nil, errors.New("StartProcs: Bin, N and Dir are required")
	}
	if opts.BasePort == 0 {
		opts.BasePort = 17946
	}
	if opts.BootstrapExpect == 0 {
		opts.BootstrapExpect = min(opts.N, 3)
	}
	// Every path given to an agent, and so to its jobs (SHOAL_AGENT_SOCK),
	// must hold from any directory.
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("cluster dir: %w", err)
	}
	opts.Dir = abs
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", opts.Dir, err)
	}
	if opts.Token == "" {
		tok, err := agent.NewToken()
		if err != nil {
			return nil, err
		}
		opts.Token = tok
	}
	p := &ProcCluster{Opts: opts, TokenFile: filepath.Join(opts.Dir, "token"), Token: opts.Token}
	if err := writeToken(p.TokenFile, opts.Token); err != nil {
		return nil, err
	}
	for i := range opts.N {
		g := opts.BasePort + 3*i
		for _, port := range []int{g, g + 1, g + 2} {
			if !portFree(port) {
				p.StopAll()
				return nil, fmt.Errorf("port %d is taken: stop what runs there (an old demo? 'make demo-stop') or pick another base port", port)
			}
		}
		n := ProcNode{Name: "node" + strconv.Itoa(i+1), GossipPort: g, RaftPort: g + 1, HTTPPort: g + 2}
		n.DataDir = filepath.Join(opts.Dir, n.Name)
		n.Log = filepath.Join(opts.Dir, n.Name+".log")
		n.args = []string{"agent", "--name", n.Name, "--bind", "127.0.0.1",
			"--gossip-port", strconv.Itoa(g), "--raft-port", strconv.Itoa(g + 1), "--http-port", strconv.Itoa(g + 2),
			"--data-dir", n.DataDir, "--token-file", p.TokenFile, "--bootstrap-expect", strconv.Itoa(opts.BootstrapExpect),
			"--probe-port", "0"}
		if i > 0 {
			n.args = append(n.args, "--join", "127.0.0.1:"+strconv.Itoa(opts.BasePort))
		}
		n.args = append(n.args, opts.Args...)
		p.Nodes = append(p.Nodes, n)
		p.procs = append(p.procs, nil)
		if err := p.start(i); err != nil {
			p.StopAll()
			return nil, err
		}
	}
	return p, p.save()
}

// writeToken writes the token to a new file of mode 0600. An old file is
// removed first rather than rewritten: its mode (or a link planted in its
// place) would otherwise survive.
func writeToken(path, tok string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove old token: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write token: %w", err)
	}
	return f.Close()
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	u.Close()
	return true
}

func (p *ProcCluster) start(i int) error {
	n := &p.Nodes[i]
	logf, err := os.OpenFile(n.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(p.Opts.Bin, n.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: p.Opts.Detach, Pdeathsig: pdeath(p.Opts.Detach)}
	if err := spawn.Start(cmd); err != nil {
		return fmt.Errorf("start %s: %w", n.Name, err)
	}
	n.PID = cmd.Process.Pid
	p.procs[i] = cmd.Process
	go cmd.Wait() // reap; liveness is checked through the API
	return nil
}

func pdeath(detach bool) syscall.Signal {
	if detach {
		return 0
	}
	return syscall.SIGKILL
}

func (p *ProcCluster) save() error {
	b, _ := json.MarshalIndent(p, "", "  ")
	return os.WriteFile(filepath.Join(p.Opts.Dir, "cluster.json"), b, 0o644)
}

// Client returns an API client for agent i: the same one at every call
// while the agent keeps its port and the cluster its token.
func (p *ProcCluster) Client(i int) *api.Client {
	base := p.Addr(i)
	p.clientsMu.Lock()
	defer p.clientsMu.Unlock()
	if c, ok := p.clients[base]; ok && c.Token == p.Token {
		return c
	}
	if p.clients == nil {
		p.clients = map[string]*api.Client{}
	}
	c := tokenClient(base, p.Token)
	p.clients[base] = c
	return c
}

// Addr is agent i's API URL.
func (p *ProcCluster) Addr(i int) string {
	return "https://127.0.0.1:" + strconv.Itoa(p.Nodes[i].HTTPPort)
}

// Kill sends SIGKILL to agent i: a crash.
func (p *ProcCluster) Kill(i int) error { return p.signal(i, syscall.SIGKILL) }

// Term sends SIGTERM to agent i: a graceful stop.
func (p *ProcCluster) Term(i int) error { return p.signal(i, syscall.SIGTERM) }

// StopForRestart sends SIGUSR2 to agent i, the restart a service manager
// sends (its supervised jobs keep running), and waits for it to exit.
func (p *ProcCluster) StopForRestart(i int) error {
	if err := p.signal(i, syscall.SIGUSR2); err != nil {
		return err
	}
	pr := p.procs[i]
	if err := Poll(30*time.Second, func() bool { return pr.Signal(syscall.Signal(0)) != nil }); err != nil {
		return fmt.Errorf("agent %s did not stop for its restart: %w", p.Nodes[i].Name, err)
	}
	p.Nodes[i].PID = 0
	return nil
}

func (p *ProcCluster) signal(i int, sig syscall.Signal) error {
	if p.Nodes[i].PID == 0 {
		return nil
	}
	err := syscall.Kill(p.Nodes[i].PID, sig)
	if sig == syscall.SIGKILL {
		p.Nodes[i].PID = 0
	}
	return err
}

// Restart starts agent i again (after Kill or Term) with the same flags,
// joining the others.
func (p *ProcCluster) Restart(i int) error {
	if p.Nodes[i].PID != 0 {
		_ = p.Kill(i)
		waitGone(p.procs[i])
	}
	n := &p.Nodes[i]
	if i == 0 && len(p.Nodes) > 1 {
		n.args = append(n.args, "--join", "127.0.0.1:"+strconv.Itoa(p.Nodes[1].GossipPort))
	}
	if err := p.start(i); err != nil {
		return err
	}
	return p.save()
}

func waitGone(pr *os.Process) {
	if pr == nil {
		return
	}
	_ = Poll(5*time.Second, func() bool { return pr.Signal(syscall.Signal(0)) != nil })
}

// StopAll terminates every agent gracefully, then kills what is left.
func (p *ProcCluster) StopAll() {
	for i := range p.Nodes {
		_ = p.Term(i)
	}
	for i, pr := range p.procs {
		if pr == nil {
			continue
		}
		if Poll(10*time.Second, func() bool { return pr.Signal(syscall.Signal(0)) != nil }) != nil {
			_ = p.Kill(i)
		}
	}
}

// WaitConverged waits until every agent lists all N nodes alive and agrees
// on a raft leader.
func (p *ProcCluster) WaitConverged(ctx context.Context, timeout time.Duration) error {
	err := Poll(timeout, func() bool {
		leader := ""
		for i := range p.Nodes {
			ns, err := p.Client(i).Nodes(ctx)
			if err != nil || len(ns) != len(p.Nodes) {
				return false
			}
			for _, n := range ns {
				if n.Status != "alive" {
					return false
				}
			}
			l, err := p.Client(i).Leader(ctx)
			if err != nil || (leader != "" && l.Name != leader) {
				return false
			}
			leader = l.Name
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("cluster of %d did not converge within %v (logs in %s)", len(p.Nodes), timeout, p.Opts.Dir)
	}
	return nil
}
