package testcluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster/twins"
)

// NewToken is a fresh random cluster token, as `shoal keygen` makes. Every
// test cluster has its own: its agents listen on loopback, where every
// local user of the machine reaches them, and a token written in the
// source would let any of them act as root on the cluster (jobs in any
// user's name, root included) while the tests run, often as root.
func NewToken(t testing.TB) string {
	t.Helper()
	tok, err := agent.NewToken()
	if err != nil {
		t.Fatalf("cluster token: %v", err)
	}
	return tok
}

// Options shape a test cluster. The zero value gives a cluster where every
// node is a voter candidate with bootstrap-expect min(n, 3).
type Options struct {
	// BootstrapExpect and Voters as in agent.Config; 0 means min(n, 3) and
	// BootstrapExpect.
	BootstrapExpect, Voters int
	// Sampler, when set, gives node i its sampler (to inject state changes).
	Sampler func(i int) probe.Sampler
	// Static, when set, gives node i a fixed inventory instead of the host's.
	Static func(i int) *probe.Static
	// Configure, when set, adjusts node i's config last.
	Configure func(i int, c *agent.Config)
	// LogLevel of agent logs copied to t.Log. Default: warnings and errors.
	LogLevel slog.Level
	// Bin is the shoal binary agents start for probe processes and MPI's
	// remote launcher; see BuildShoal. Empty leaves the agent's default.
	Bin string
	// Prefix of node names. Default "n".
	Prefix string
	// Later is how many of the last nodes New configures but does not
	// start: Start brings them in, as nodes joining a formed cluster.
	Later int
	// Twins runs gossip and raft over in-memory twins (package twins)
	// instead of sockets, TLS and boltdb: Partition, Disconnect and Heal
	// work, without root. The HTTP API stays on loopback.
	Twins bool
}

// Cluster is a set of in-process agents.
type Cluster struct {
	t     testing.TB
	opts  Options
	token string

	mu     sync.Mutex
	agents []*agent.Agent // nil while a node is down
	cfgs   []agent.Config
	// clients holds one API client per agent address. A client per call
	// would leave one kept-alive TLS connection per poll open on the agent
	// until its idle timeout, a handshake each, until the agent's
	// per-source connection cap refuses the test its next call.
	clients map[string]*api.Client
	// net is the twins' network when Options.Twins is set.
	net *twins.Network
}

// New starts n agents, joins them into one cluster and registers their
// shutdown with t.Cleanup. It does not wait for raft; use WaitLeader.
func New(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if opts.BootstrapExpect == 0 {
		opts.BootstrapExpect = min(n, 3)
	}
	if opts.Prefix == "" {
		opts.Prefix = "n"
	}
	if opts.LogLevel == 0 {
		opts.LogLevel = slog.LevelWarn
	}
	c := &Cluster{t: t, opts: opts, token: NewToken(t), agents: make([]*agent.Agent, n), cfgs: make([]agent.Config, n)}
	if opts.Twins {
		c.net = twins.NewNetwork()
	}
	// TempDir first: cleanups run last-registered first, so the agents stop
	// before their data directories are removed.
	base := t.TempDir()
	h, quiet := newTLogHandler(t, opts.LogLevel)
	t.Cleanup(func() {
		c.StopAll(agent.Abrupt)
		quiet()
	})
	for i := range n {
		cfg := agent.DefaultConfig()
		cfg.Name = opts.Prefix + strconv.Itoa(i)
		cfg.BindAddr = "127.0.0.1"
		cfg.GossipPort, cfg.RaftPort, cfg.HTTPPort = 0, 0, 0
		cfg.Probes.Port = 0
		// Loopback has no link to check: a check there reads the CPU,
		// whose share swings by more than the check's factor of two under
		// a parallel suite, and would have pairs tested again and capped.
		cfg.Probes.LinkCheck.Interval = 0
		cfg.DataDir = filepath.Join(base, cfg.Name)
		cfg.Token = c.token
		cfg.SampleInterval = 200 * time.Millisecond
		cfg.BootstrapExpect, cfg.Voters = opts.BootstrapExpect, opts.Voters
		cfg.DeadVoterGrace = 2 * time.Second
		// Loopback clusters declare no switches: jobs are placed at once,
		// as these tests expect, not after the network model.
		cfg.PlacementModelWait = 0
		cfg.Gossip = gossip.TestConfig()
		// Loopback tests run many agents on two cores, often under the
		// race detector: raft timings with headroom over the LAN defaults.
		cfg.Raft.HeartbeatTimeout = 1500 * time.Millisecond
		cfg.Raft.ElectionTimeout = 1500 * time.Millisecond
		cfg.Raft.LeaderLeaseTimeout = 750 * time.Millisecond
		// A write waits out an election, which a loaded machine slows.
		cfg.WriteTimeout = Stretch(20 * time.Second)
		// The API bounds a write's wait to two thirds of its request
		// timeout (the rest is for answering): stretched alike, or on a
		// loaded machine the stretched wait would be cut short.
		cfg.HTTP.RequestTimeout = Stretch(30 * time.Second)
		cfg.Logger = slog.New(h)
		cfg.Bin = opts.Bin
		if c.net != nil {
			// No raft port is bound: this one only names the node's
			// twin, below the kernel's ephemeral range the HTTP port
			// comes from.
			cfg.RaftPort = twinRaftPort + i
			cfg.RaftBackend = c.net.Raft(cfg.Name)
		}
		if opts.Sampler != nil {
			cfg.Sampler = opts.Sampler(i)
		}
		if opts.Static != nil {
			cfg.Static = opts.Static(i)
		} else {
			cfg.Static = DefaultStatic(cfg.Name)
		}
		if opts.Configure != nil {
			opts.Configure(i, &cfg)
		}
		c.cfgs[i] = cfg
		if i >= n-opts.Later {
			continue
		}
		if err := c.start(i); err != nil {
			t.Fatalf("start agent %d: %v", i, err)
		}
	}
	return c
}

// DefaultStatic is the inventory test nodes have unless told otherwise; a
// fixed one keeps tests independent of the machine they run on.
func DefaultStatic(name string) *probe.Static {
	return &probe.Static{Static: nodestate.Static{Hostname: name, CPUModel: "testcluster CPU", Cores: 4, Threads: 8, MHz: 2400,
		MemTotal: 16 << 30, PEs: []nodestate.PE{{Kind: "cpu", Count: 8}}}}
}

func (c *Cluster) start(i int) error {
	cfg := c.cfgs[i]
	// Join whoever is up, so that restarts work whichever node went down.
	cfg.Join = nil
	c.mu.Lock()
	for j, a := range c.agents {
		if a != nil && j != i {
			cfg.Join = append(cfg.Join, "127.0.0.1:"+strconv.Itoa(a.GossipPort()))
		}
	}
	c.mu.Unlock()
	if c.net != nil {
		cfg.Gossip.Transport = c.net.Gossip(cfg.Name)
	}
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	if err := a.Start(context.Background()); err != nil {
		a.Shutdown(agent.Abrupt)
		return err
	}
	// Keep the ports the kernel picked, so a restart comes back where the
	// cluster expects it.
	c.cfgs[i].GossipPort, c.cfgs[i].RaftPort, c.cfgs[i].HTTPPort = a.GossipPort(), a.RaftPort(), a.HTTPPort()
	c.mu.Lock()
	c.agents[i] = a
	c.mu.Unlock()
	return nil
}

// Token is the cluster's token, fresh for every cluster (NewToken).
func (c *Cluster) Token() string { return c.token }

// N is the number of nodes, up or down.
func (c *Cluster) N() int { return len(c.cfgs) }

// Agent returns node i's agent, or nil when it is down.
func (c *Cluster) Agent(i int) *agent.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agents[i]
}

// Name returns node i's name.
func (c *Cluster) Name(i int) string { return c.cfgs[i].Name }

// Index returns the index of the node with the given name, or -1.
func (c *Cluster) Index(name string) int {
	for i, cfg := range c.cfgs {
		if cfg.Name == name {
			return i
		}
	}
	return -1
}

// Up lists the indices of running nodes.
func (c *Cluster) Up() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for i, a := range c.agents {
		if a != nil {
			out = append(out, i)
		}
	}
	return out
}

// Client returns an API client for node i, with the cluster token.
func (c *Cluster) Client(i int) *api.Client {
	base := "https://127.0.0.1:" + strconv.Itoa(c.cfgs[i].HTTPPort)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clients == nil {
		c.clients = map[string]*api.Client{}
	}
	cl, ok := c.clients[base]
	if !ok {
		cl = tokenClient(base, c.token)
		c.clients[base] = cl
	}
	return cl
}

// Kill stops node i abruptly: no leave, no leadership transfer. An index
// that names no node (Leader's -1 while there is none) fails the test.
func (c *Cluster) Kill(i int) { c.t.Helper(); c.stop(i, agent.Abrupt) }

// Stop stops node i gracefully.
func (c *Cluster) Stop(i int) { c.t.Helper(); c.stop(i, agent.Graceful) }

// StopForRestart stops node i as a service restart does
// (agent.ShutdownForRestart): its supervised attempts keep running for its
// next start to adopt.
func (c *Cluster) StopForRestart(i int) {
	c.t.Helper()
	c.stopWith(i, func(a *agent.Agent) error { return a.ShutdownForRestart() })
}

func (c *Cluster) stop(i int, graceful bool) {
	c.t.Helper()
	c.stopWith(i, func(a *agent.Agent) error { return a.Shutdown(graceful) })
}

func (c *Cluster) stopWith(i int, shutdown func(*agent.Agent) error) {
	c.t.Helper()
	if i < 0 || i >= len(c.cfgs) {
		c.t.Fatalf("stop node %d: the cluster has nodes 0 to %d (-1 is Leader's answer when there is no leader: wait for one with WaitLeader)", i, len(c.cfgs)-1)
	}
	c.mu.Lock()
	a := c.agents[i]
	c.agents[i] = nil
	c.mu.Unlock()
	if a != nil {
		if err := shutdown(a); err != nil {
			c.t.Logf("shutdown %s: %v", c.cfgs[i].Name, err)
		}
	}
}

// Restart starts node i again with its name, ports and data directory.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Agent(i) != nil {
		c.t.Fatalf("restart %s: it is running", c.cfgs[i].Name)
	}
	// The node comes back on the ports the cluster knows it by, which the
	// kernel may have lent, meanwhile, to another test's outgoing
	// connection (bind: address already in use; seen once in a CI run of
	// TestRotation_RollingNewCA). Such a loan ends with its connection:
	// try again until the port is free, for a bounded time.
	var err error
	_ = Poll(20*time.Second, func() bool {
		err = c.start(i)
		return !errors.Is(err, syscall.EADDRINUSE)
	})
	if err != nil {
		c.t.Fatalf("restart %s: %v", c.cfgs[i].Name, err)
	}
}

// Reconfigure changes the configuration node i starts with next; the node
// must be down (a rolling change: Stop, Reconfigure, Restart).
func (c *Cluster) Reconfigure(i int, fn func(*agent.Config)) {
	c.t.Helper()
	if c.Agent(i) != nil {
		c.t.Fatalf("reconfigure %s: it is running; stop it first", c.cfgs[i].Name)
	}
	fn(&c.cfgs[i])
}

// Start starts node i, one that Options.Later held back, joining the
// nodes that are up.
func (c *Cluster) Start(i int) { c.t.Helper(); c.Restart(i) }

// StopAll stops every running node.
func (c *Cluster) StopAll(graceful bool) {
	var wg sync.WaitGroup
	for _, i := range c.Up() {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop(i, graceful) }()
	}
	wg.Wait()
}

// Leader returns the index of the node that is raft leader in its own
// eyes and agreed by every running node, or -1.
func (c *Cluster) Leader() int {
	leader := ""
	for _, i := range c.Up() {
		a := c.Agent(i)
		if a == nil {
			continue
		}
		id := a.LeaderName() // a client's is the one the servers gossip
		if id == "" || (leader != "" && id != leader) {
			return -1
		}
		leader = id
	}
	i := c.Index(leader)
	if i < 0 {
		return -1
	}
	if a := c.Agent(i); a == nil || !a.IsLeader() {
		return -1
	}
	return i
}

// WaitLeader waits for a leader every running node agrees on.
func (c *Cluster) WaitLeader(timeout time.Duration) int {
	c.t.Helper()
	leader := -1
	WaitFor(c.t, timeout, "a raft leader agreed by every running node", func() bool {
		leader = c.Leader()
		return leader >= 0
	}, c.Describe)
	return leader
}

// Describe summarises every node's raft view, for failure messages.
func (c *Cluster) Describe() string {
	s := ""
	for i := range c.cfgs {
		a := c.Agent(i)
		if a == nil {
			s += fmt.Sprintf("[%s down] ", c.cfgs[i].Name)
			continue
		}
		state := "client"
		if r := a.Raft(); r != nil {
			state = r.State().String()
		}
		s += fmt.Sprintf("[%s %s leader=%q alive=%d] ", c.cfgs[i].Name, state, a.LeaderName(), a.Gossip().NumAlive())
	}
	return s
}

// DataDir is node i's data directory.
func (c *Cluster) DataDir(i int) string { return c.cfgs[i].DataDir }
