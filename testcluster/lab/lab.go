package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// Options tune [Up]. Shoal is required; the rest has defaults.
type Options struct {
	// Shoal is the path of the shoal binary every agent and CLI call runs.
	Shoal string
	// Dir holds the token, the agents' data directories, per-node HOST_PROC
	// directories and the launcher script; empty: a temporary directory that
	// Close removes. Process logs go to the testbed's directory.
	Dir string
	// Testbed is passed to netns.Up (Logger and Dir default to this lab's).
	Testbed netns.Options
	// Logger receives the lab's progress; nil discards it.
	Logger *slog.Logger
	// BootstrapExpect is the agents' --bootstrap-expect and the number of
	// nodes (the first ones in topology order) every agent joins. Default 3.
	BootstrapExpect int
	// AgentArgs are appended to every `shoal agent` command line (e.g.
	// "--bandwidth-interval", "30s").
	AgentArgs []string
	// AgentEnv is appended to every agent's environment.
	AgentEnv []string
	// EmulateLoad gives each agent a HOST_PROC whose loadavg shows the
	// node's own hogs (see the package doc). Default off.
	EmulateLoad bool
	// ConfineHogs, when > 0, is the CPU quota in percent of one core of the
	// cgroup that each hog node's hogs (and the MPI ranks the launcher
	// script starts there) share. Default 0: hogs stay as netns starts them.
	ConfineHogs int
	// VotersFirst starts the first BootstrapExpect nodes' agents, waits
	// until they have elected a leader, and only then starts the rest: the
	// voters are then known (the first nodes), e.g. to partition a minority
	// without a quorum. Default off: all start at once.
	VotersFirst bool
	// FormTimeout bounds VotersFirst's wait for the first leader. Default 60s.
	FormTimeout time.Duration
	// AgentTimeout bounds the wait for every agent's HTTP port. Default 30s.
	AgentTimeout time.Duration
}

// HTTPPort is the agents' API port (shoal's default).
const HTTPPort = 7948

// Lab is a running shoal cluster on a testbed.
type Lab struct {
	TB   *netns.Testbed
	opts Options
	log  *slog.Logger
	dir  string
	own  bool

	token string // path of the token file

	mu     sync.Mutex
	agents map[string]*netns.Process // current agent process per node
	cg     *cgroups

	closeOnce sync.Once
	closeErr  error
}

// Up brings topo up and starts one agent per node, returning once every
// agent's API listens (not once the cluster is formed: see [Lab.WaitFormed]).
// On error everything it started is torn down.
func Up(ctx context.Context, topo netns.Topology, opts Options) (l *Lab, err error) {
	if opts.Shoal == "" {
		return nil, errors.New("lab: Options.Shoal (path of the shoal binary) is required")
	}
	if _, err := os.Stat(opts.Shoal); err != nil {
		return nil, fmt.Errorf("lab: shoal binary: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.BootstrapExpect == 0 {
		opts.BootstrapExpect = 3
	}
	if opts.FormTimeout == 0 {
		opts.FormTimeout = 60 * time.Second
	}
	if opts.AgentTimeout == 0 {
		opts.AgentTimeout = 30 * time.Second
	}
	l = &Lab{opts: opts, log: opts.Logger, agents: map[string]*netns.Process{}}
	if l.dir = opts.Dir; l.dir == "" {
		if l.dir, err = os.MkdirTemp("", "shoal-lab-"); err != nil {
			return nil, fmt.Errorf("lab dir: %w", err)
		}
		l.own = true
	}
	if opts.Testbed.Logger == nil {
		opts.Testbed.Logger = opts.Logger
	}
	if opts.Testbed.Dir == "" {
		opts.Testbed.Dir = filepath.Join(l.dir, "logs")
		if err := os.MkdirAll(opts.Testbed.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("lab logs dir: %w", err)
		}
	}
	start := time.Now()
	tb, err := netns.Up(ctx, topo, opts.Testbed)
	if err != nil {
		l.removeDir()
		return nil, err
	}
	l.TB = tb
	defer func() {
		if err != nil {
			_ = l.Close()
			l = nil
		}
	}()
	l.log.Info("testbed up", "topology", topo.Name, "prefix", tb.Prefix(), "took", time.Since(start).Round(time.Millisecond))
	if err := l.writeToken(ctx); err != nil {
		return l, err
	}
	if opts.ConfineHogs > 0 {
		if l.cg, err = confineHogs(tb, opts.ConfineHogs); err != nil {
			return l, err
		}
	}
	nodes := l.Nodes()
	rest := nodes
	if opts.VotersFirst && opts.BootstrapExpect < len(nodes) {
		first := nodes[:opts.BootstrapExpect]
		rest = nodes[opts.BootstrapExpect:]
		for _, n := range first {
			if err := l.StartAgent(ctx, n); err != nil {
				return l, err
			}
		}
		leader, err := l.WaitConverged(ctx, first, opts.FormTimeout)
		if err != nil {
			return l, fmt.Errorf("first %d agents: %w (log of %s: %s)", len(first), err, first[0], l.agentLog(first[0]))
		}
		l.log.Info("voters up", "nodes", first, "leader", leader, "took", time.Since(start).Round(time.Millisecond))
	}
	for _, n := range rest {
		if err := l.StartAgent(ctx, n); err != nil {
			return l, err
		}
	}
	for _, n := range tb.Nodes() {
		if err := tb.WaitListening(ctx, n.Name, HTTPPort, opts.AgentTimeout); err != nil {
			return l, fmt.Errorf("agent on %s: %w (log: %s)", n.Name, err, l.agentLog(n.Name))
		}
	}
	l.log.Info("agents up", "nodes", len(tb.Nodes()), "took", time.Since(start).Round(time.Millisecond))
	return l, nil
}

// Dir is the lab's directory (token, data directories, launcher script).
func (l *Lab) Dir() string { return l.dir }

// TokenFile is the path of the cluster token.
func (l *Lab) TokenFile() string { return l.token }

// Nodes lists the node names in topology order.
func (l *Lab) Nodes() []string {
	var out []string
	for _, n := range l.TB.Nodes() {
		out = append(out, n.Name)
	}
	return out
}

// Close stops every agent and tears the testbed down. Safe to call twice.
func (l *Lab) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		if l.TB != nil {
			// The testbed stops every process it started (agents included,
			// gracefully first) and deletes the namespaces.
			errs = append(errs, l.TB.Close())
		}
		if l.cg != nil {
			errs = append(errs, l.cg.remove())
		}
		l.removeDir()
		l.closeErr = errors.Join(errs...)
	})
	return l.closeErr
}

func (l *Lab) removeDir() {
	if l.own {
		_ = os.RemoveAll(l.dir)
	}
}

func (l *Lab) writeToken(ctx context.Context) error {
	first := l.TB.Nodes()[0].Name
	out, err := l.TB.Run(ctx, first, l.opts.Shoal, "keygen")
	if err != nil {
		return fmt.Errorf("shoal keygen: %w", err)
	}
	l.token = filepath.Join(l.dir, "token")
	if err := os.WriteFile(l.token, []byte(out), 0o600); err != nil {
		return fmt.Errorf("write token: %w", err)
	}
	return nil
}
