package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/metrics"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Agent is one running shoal node.
type Agent struct {
	cfg Config
	log *slog.Logger

	httpLn, raftLn net.Listener
	// sockLn is the local socket (socket.go); nil when off.
	sockLn  net.Listener
	httpSrv *http.Server
	// tls is the agent's CA trust and certificate (tls.go): every TCP
	// listener and client but gossip's speaks TLS 1.3 with it.
	tls *tlsState

	gossip *gossip.Gossip
	static probe.Static
	// cgroups confines this node's jobs; nil with cgroupsOff saying why
	// (confinement.go).
	cgroups    *confine.Manager
	cgroupsOff string

	// node is raft with its transport and stores (agent/raftnode); raft
	// is node.Raft.
	node *raftnode.Node
	raft *raft.Raft
	fsm  *raftfsm.FSM
	// feed streams fsm's applied entries to client agents (agent/replica).
	feed *replica.Feed
	// leaderCh is raft's NotifyCh: buffered, so no transition is lost.
	leaderCh <-chan bool
	// appliedLeader and appliedJobs are signalled after every applied raft
	// entry (raftnode's notifying FSM).
	appliedLeader, appliedJobs chan struct{}
	// leaderHooks run on every leader round besides the leader core's
	// duties (leading.go); registered before Start starts the leader loop.
	leaderHooks []func(ctx context.Context)
	// metrics are GET /v1/metrics' (metrics.go), set before the leader
	// loop starts.
	metrics *metrics.Metrics
	// live holds the settings a SIGHUP may change (reload.go).
	live liveConfig
	// clock is where the leader's loops read the time.
	clock func() time.Time
	// probes runs the network probes and their processes (issue 5).
	probes *probes.Manager
	// rows sends this node's network row to the servers and, on a server,
	// holds every node's (netrows.go); set in Start.
	rows *netRows

	// The components the rooms share, each built from explicit parts
	// (none keeps the agent): peers reach other agents (peers.go), the
	// applier commits raft commands from this node (apply.go), the
	// progress reporter commits elastic jobs' progress
	// (elastic_progress.go), all three set in Start; elastic holds the
	// elastic options (elastic.go) and loops are the agent's goroutines
	// (loops.go), both set in New.
	peers    *peers
	applier  *applier
	progress *progressReporter
	elastic  *elasticSettings
	loops    *loops

	// jobNode is the node side of jobs (agent/jobrun): the reconciler,
	// launcher and executor of this node's job processes; set in Start.
	jobNode *jobrun.Node
	// self is who the agent runs as; not root makes it single-user.
	self agentIdentity

	stopOnce sync.Once
	stopErr  error
}

// Stop modes for Shutdown.
const (
	// Graceful leaves gossip, hands leadership over and closes stores.
	Graceful = true
	// Abrupt stops without telling anybody, as a crash would look to peers.
	Abrupt = false
)

// New validates cfg and binds the HTTP and raft listeners and the local
// socket, so that ports chosen by the kernel (port 0) are known, and a
// socket in use is reported, before anything starts.
func New(cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid agent config: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	log := cfg.Logger.With("node", cfg.Name)
	a := &Agent{cfg: cfg, log: log, self: selfIdentity(), clock: time.Now, elastic: &elasticSettings{}, loops: newLoops(log)}
	r := cfg.Reloadable()
	a.live.p.Store(&r)
	var err error
	if a.tls, err = loadTLS(&cfg, time.Now); err != nil {
		return nil, err
	}
	if a.httpLn, err = net.Listen("tcp", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.HTTPPort))); err != nil {
		return nil, fmt.Errorf("listen for the HTTP API on port %d: %w", cfg.HTTPPort, err)
	}
	if a.raftLn, err = net.Listen("tcp", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.RaftPort))); err != nil {
		a.httpLn.Close()
		return nil, fmt.Errorf("listen for raft on port %d: %w", cfg.RaftPort, err)
	}
	if a.sockLn, err = listenSocket(&a.cfg, a.log); err != nil {
		a.httpLn.Close()
		a.raftLn.Close()
		return nil, err
	}
	return a, nil
}

// HTTPPort and RaftPort are the bound ports.
func (a *Agent) HTTPPort() int { return a.httpLn.Addr().(*net.TCPAddr).Port }

// RaftPort is the bound raft port.
func (a *Agent) RaftPort() int { return a.raftLn.Addr().(*net.TCPAddr).Port }

// GossipPort is the bound gossip port (after Start).
func (a *Agent) GossipPort() int { _, p := a.gossip.LocalAddr(); return p }

// Name is the node's name.
func (a *Agent) Name() string { return a.cfg.Name }

// Gossip exposes the gossip layer to tests and the CLI's in-process uses.
func (a *Agent) Gossip() *gossip.Gossip { return a.gossip }

// Raft exposes the raft instance (read-only uses: state, configuration).
func (a *Agent) Raft() *raft.Raft { return a.raft }

// FSM exposes the replicated state machine for local (stale) reads.
func (a *Agent) FSM() *raftfsm.FSM { return a.fsm }

// Start scans the node, starts gossip, raft and the API, and begins joining
// in the background. It returns once everything listens.
func (a *Agent) Start(ctx context.Context) error {
	if err := a.scanStatic(ctx); err != nil {
		return err
	}
	a.openCgroups()
	if err := a.startGossip(); err != nil {
		return err
	}
	a.peers = newPeers(a.gossip, a.tls.peer)
	a.rows = newNetRows(a.cfg.Rows, a.cfg.Name, a.gossip, a.peers, a.clock, a.log)
	if err := a.settleTLS(); err != nil {
		a.gossip.Shutdown()
		return err
	}
	if err := a.startRaft(); err != nil {
		a.gossip.Shutdown()
		return err
	}
	a.applier = &applier{raft: a.raft, fsm: a.fsm, peers: a.peers, writeTimeout: a.cfg.WriteTimeout}
	a.progress = &progressReporter{log: a.log, now: time.Now, apply: a.applier.Apply, state: a.fsm, options: a.elastic, loops: a.loops}
	var err error
	if a.jobNode, err = a.newJobNode(); err != nil {
		a.raft.Shutdown()
		a.gossip.Shutdown()
		return err
	}
	if err := a.startHTTP(); err != nil {
		a.gossip.Shutdown()
		return fmt.Errorf("start the HTTP API: %w", err)
	}
	a.startProbes()
	a.loops.run("netrows-send", a.rows.sender.Run)
	a.loops.run("netrows-prune", a.rows.prune)
	a.startJobs()
	a.startJobGC()
	a.loops.run("bootstrap", func(ctx context.Context) {
		a.node.Bootstrap(ctx, a.gossip, a.cfg.Name, a.cfg.BootstrapExpect, a.log)
	})
	var observePlacement func(time.Duration)
	if m := a.metrics; m != nil {
		observePlacement = func(d time.Duration) { m.Placement.Observe(d.Seconds()) }
	}
	lead := &leading{log: a.log, raft: a.raft, fsm: a.fsm, gossip: a.gossip, rows: a.rows.leaderRow, clock: a.clock,
		config: leaderConfig(a.cfg, a.elastic, &a.live), apply: a.applier.applyLocal, observePlacement: observePlacement,
		leaderCh: a.leaderCh, applied: a.appliedLeader, hooks: slices.Clone(a.leaderHooks)}
	a.loops.run("leader", lead.loop)
	if len(a.cfg.Join) > 0 {
		a.loops.run("join", func(ctx context.Context) {
			if err := a.gossip.Join(ctx, a.cfg.Join); err != nil && ctx.Err() == nil {
				a.log.Error("join gave up", "err", err)
			}
		})
	}
	a.log.Info("agent started", "addr", a.advertiseIP(), "gossip_port", a.GossipPort(),
		"raft_port", a.RaftPort(), "http_port", a.HTTPPort(), "socket", a.SocketPath(), "bootstrap_expect", a.cfg.BootstrapExpect)
	return nil
}

func (a *Agent) scanStatic(ctx context.Context) error {
	if a.cfg.Static != nil {
		a.static = *a.cfg.Static
		a.static.PEs = probe.MergePEs(probe.PE{Kind: "cpu", Count: a.static.Threads}, a.static.PEs, a.cfg.PEs)
		return nil
	}
	st, err := probe.ScanStatic(ctx, probe.StaticConfig{Declared: a.cfg.PEs, Logger: a.log})
	if err != nil {
		return fmt.Errorf("scan node inventory: %w", err)
	}
	a.static = st
	return nil
}

func (a *Agent) startGossip() error {
	gc := a.cfg.Gossip
	gc.Name = a.cfg.Name
	gc.BindAddr = a.cfg.BindAddr
	gc.AdvertiseAddr = a.cfg.advertise()
	gc.Port = a.cfg.GossipPort
	gc.Key = GossipKey(a.cfg.Token)
	gc.Logger = a.log
	st := a.static
	g, err := gossip.New(gc, gossip.NodeState{
		RaftPort: a.RaftPort(), HTTPPort: a.HTTPPort(),
		Static: a.gossipStatic(toGossipStatic(st, a.cfg.Switch)),
	})
	if err != nil {
		return err
	}
	a.gossip = g
	return nil
}

// advertiseIP is the address peers use, as gossip settled it.
func (a *Agent) advertiseIP() string {
	ip, _ := a.gossip.LocalAddr()
	return ip
}

// HTTPAddr is the API's base URL as peers reach it.
func (a *Agent) HTTPAddr() string {
	return "https://" + net.JoinHostPort(a.advertiseIP(), strconv.Itoa(a.HTTPPort()))
}

// Shutdown stops the agent; graceful leaves the cluster politely.
func (a *Agent) Shutdown(graceful bool) error {
	a.stopOnce.Do(func() { a.stopErr = a.shutdown(graceful) })
	return a.stopErr
}

func (a *Agent) shutdown(graceful bool) error {
	var errs []error
	if graceful && a.raft != nil && a.raft.State() == raft.Leader {
		// Hand leadership over first, so the cluster does not wait an
		// election timeout to notice.
		if err := a.raft.LeadershipTransfer().Error(); err != nil {
			a.log.Warn("leadership transfer before leaving", "err", err)
		}
	}
	if graceful && a.gossip != nil {
		if err := a.gossip.Leave(3 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	a.loops.cancel()
	if a.httpSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = a.httpSrv.Shutdown(ctx)
		cancel()
	} else {
		a.httpLn.Close()
		if a.sockLn != nil {
			a.sockLn.Close()
		}
	}
	if a.raft != nil {
		if err := a.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("shut down raft: %w", err))
		}
	} else {
		a.raftLn.Close()
	}
	if a.node != nil {
		a.node.CloseTransport()
	}
	if a.gossip != nil {
		if err := a.gossip.Shutdown(); err != nil {
			errs = append(errs, err)
		}
	}
	a.loops.wait()
	a.closeCgroups() // after the job loop, which removed its attempts' cgroups
	if a.node != nil {
		if err := a.node.CloseStore(); err != nil {
			errs = append(errs, fmt.Errorf("close raft store: %w", err))
		}
	}
	a.log.Info("agent stopped", "graceful", graceful)
	return errors.Join(errs...)
}
