package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/agent/probes"
	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/internal/watch"
	"github.com/shoal-hpc/shoal/metrics"
	"github.com/shoal-hpc/shoal/nodestate"
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

	// srv holds raft, its transport and stores (agent/raftnode) and its
	// autopilot once this agent is a server; nil on a client (roles.go).
	// roleMu orders becoming a server against Shutdown.
	srv    serverRef
	roleMu sync.Mutex
	// fsm is the replicated state: raft's on a server, the followed copy
	// (agent/replica) on a client.
	fsm *raftfsm.FSM
	// feed streams fsm's applied entries to client agents (agent/replica).
	feed *replica.Feed
	// appliedLeader and appliedJobs are signalled after every applied raft
	// entry (raftnode's notifying FSM) or followed one (replica).
	appliedLeader, appliedJobs chan struct{}
	// appliedEvents wakes the loop that raises stateIndex, the applied
	// raft index blocking reads and the event stream wait on.
	appliedEvents chan struct{}
	stateIndex    watch.Index
	// leaderHooks run on every leader round besides the leader core's
	// duties (leading.go); registered before Start starts the leader loop.
	leaderHooks []func(ctx context.Context)
	// metrics are GET /v1/metrics' (metrics.go), set before the leader
	// loop starts.
	metrics *metrics.Metrics
	// propagation is metrics once they exist, for gossip's OnPropagation,
	// which runs from the start: gossip starts before the metrics.
	propagation atomic.Pointer[metrics.Metrics]
	// logFault says why this server's raft log cannot be written, "" when
	// it can or on a client (logfault.go).
	logFault atomic.Pointer[string]
	// live holds the settings a SIGHUP may change (reload.go).
	live liveConfig
	// clock is where the leader's loops read the time.
	clock func() time.Time
	// probes runs the network probes and their processes.
	probes *probes.Manager
	// rows sends this node's network row to the servers and, on a server,
	// holds every node's (netrows.go); set in Start.
	rows *netRows
	// placements are the reasons of the placements this agent decided as
	// leader (placements.go).
	placements *placementLog

	// The components the rooms share, each built from explicit parts
	// (none keeps the agent): peers reach other agents (peers.go), the
	// applier commits raft commands from this node (apply.go), the
	// progress reporter commits elastic jobs' progress
	// (elastic_progress.go), all three set in Start; elastic holds the
	// elastic options (elastic.go) and loops are the agent's goroutines
	// (loops.go), both set in New.
	peers   *peers
	applier *applier
	// batcher commits the job side's commands together (batcher.go).
	batcher  *batcher
	progress *progressReporter
	elastic  *elasticSettings
	loops    *loops

	// jobNode is the node side of jobs (agent/jobrun): the reconciler,
	// launcher and executor of this node's job processes; set in Start.
	jobNode *jobrun.Node
	// leases are the nodes' lease renewals this server heard while it
	// leads (leases.go).
	leases leaseBook
	// led is the raft term whose barrier this server passed as leader
	// (readindex.go).
	led ledTerm
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
	if err := CheckToken(cfg.Token); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// Jobs get paths under the data dir (SHOAL_AGENT_SOCK, SHOAL_CA_FILE)
	// and run in directories of their own: a relative --data-dir would
	// leave them pointing nowhere.
	var err error
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if cfg.Socket != "" && cfg.Socket != SocketOff {
		if cfg.Socket, err = filepath.Abs(cfg.Socket); err != nil {
			return nil, fmt.Errorf("socket: %w", err)
		}
	}
	log := cfg.Logger.With("node", cfg.Name)
	a := &Agent{cfg: cfg, log: log, self: selfIdentity(), clock: time.Now, elastic: &elasticSettings{}, loops: newLoops(log)}
	r := cfg.Reloadable()
	a.live.p.Store(&r)
	if a.tls, err = loadTLS(&cfg, time.Now); err != nil {
		return nil, err
	}
	// ownName is "" when the leaf could not be read; loadTLS has then
	// already failed or will at the first handshake, with its own error.
	if cn := a.tls.ownName(); cn != "" && cn != cfg.Name {
		// Servers take a node's network row only under its own name's
		// certificate (httpapi's POST /v1/netrow): say why at start, not
		// only in the servers' refusals.
		log.Warn("this agent's certificate names another node: servers will refuse its network rows; make it with 'shoal tls cert create --node "+cfg.Name+"'",
			"certificate", cn)
	}
	if a.httpLn, err = net.Listen("tcp", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.HTTPPort))); err != nil {
		return nil, fmt.Errorf("listen for the HTTP API on port %d: %w", cfg.HTTPPort, err)
	}
	if cfg.RaftBackend == nil {
		if a.raftLn, err = net.Listen("tcp", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.RaftPort))); err != nil {
			a.httpLn.Close()
			return nil, fmt.Errorf("listen for raft on port %d: %w", cfg.RaftPort, err)
		}
	}
	if a.sockLn, err = listenSocket(&a.cfg, a.log); err != nil {
		a.httpLn.Close()
		a.closeRaftListener()
		return nil, err
	}
	return a, nil
}

// HTTPPort and RaftPort are the bound ports.
func (a *Agent) HTTPPort() int { return a.httpLn.Addr().(*net.TCPAddr).Port }

// RaftPort is the bound raft port, or the one configured for a raft
// backend of its own.
func (a *Agent) RaftPort() int {
	if a.raftLn == nil {
		return a.cfg.RaftPort
	}
	return a.raftLn.Addr().(*net.TCPAddr).Port
}

// GossipPort is the bound gossip port (after Start).
func (a *Agent) GossipPort() int { _, p := a.gossip.LocalAddr(); return p }

// Name is the node's name.
func (a *Agent) Name() string { return a.cfg.Name }

// Gossip exposes the gossip layer to tests and the CLI's in-process uses.
func (a *Agent) Gossip() *gossip.Gossip { return a.gossip }

// Raft exposes the raft instance (read-only uses: state, configuration);
// nil while the agent is a client.
func (a *Agent) Raft() *raft.Raft { return a.srv.raft() }

// IsServer reports whether the agent runs raft.
func (a *Agent) IsServer() bool { return a.srv.load() != nil }

// IsLeader reports whether the agent is the raft leader.
func (a *Agent) IsLeader() bool {
	r := a.srv.raft()
	return r != nil && r.State() == raft.Leader
}

// LeaderName is the raft leader's name as this agent knows it: from raft
// on a server, from what the servers gossip on a client; "" when none.
func (a *Agent) LeaderName() string {
	if r := a.srv.raft(); r != nil {
		_, id := r.LeaderWithID()
		return string(id)
	}
	name, _ := gossipLeader(a.gossip)
	return name
}

// Ready reports whether the agent has joined its cluster and read its
// state: a peer answers gossip (when it was given any to join), a raft
// leader is known, and the replicated state holds at least one entry.
// Until then it says what it waits for.
func (a *Agent) Ready() (bool, string) {
	switch {
	case len(a.cfg.Join) > 0 && a.gossip.NumAlive() < 2:
		return false, "joining the cluster"
	case a.LeaderName() == "":
		return false, "waiting for a raft leader"
	case a.fsm.Index() == 0:
		return false, "reading the cluster's state"
	}
	return true, "joined; state read"
}

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
	a.fsm = raftfsm.New()
	a.placements = newPlacementLog()
	a.feed = replica.NewFeed(4096) // raft's TrailingLogs: a client as far behind as a server may be gets entries
	a.appliedLeader, a.appliedJobs, a.appliedEvents = make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	a.applier = &applier{srv: &a.srv, gossip: a.gossip, fsm: a.fsm, peers: a.peers, writeTimeout: a.cfg.WriteTimeout}
	a.batcher = newBatcher(a.loops.ctx, a.applier.Apply, a.loops.background)
	a.progress = &progressReporter{log: a.log, now: time.Now, apply: a.applier.Apply, state: a.fsm, options: a.elastic, loops: a.loops}
	var err error
	if a.jobNode, err = a.newJobNode(); err != nil {
		a.gossip.Shutdown()
		return err
	}
	if err := a.startHTTP(); err != nil {
		a.gossip.Shutdown()
		return fmt.Errorf("start the HTTP API: %w", err)
	}
	if a.raftBackend().HasState() {
		// A server before it stopped: raft restores its own state.
		if _, err := a.startServer(0); err != nil {
			a.gossip.Shutdown()
			return err
		}
	}
	a.startProbes()
	a.loops.run("netrows-send", a.rows.sender.Run)
	a.loops.run("netrows-prune", a.rows.prune)
	a.startJobs()
	a.startJobGC()
	a.loops.run("roles", a.keepRole)
	if len(a.cfg.Join) > 0 {
		a.loops.run("join", func(ctx context.Context) {
			if err := a.gossip.Join(ctx, a.cfg.Join); err != nil && ctx.Err() == nil {
				a.log.Error("join gave up", "err", err)
			}
		})
	}
	a.log.Info("agent started", "addr", a.advertiseIP(), "gossip_port", a.GossipPort(),
		"raft_port", a.RaftPort(), "http_port", a.HTTPPort(), "socket", a.SocketPath(), "bootstrap_expect", a.cfg.BootstrapExpect,
		"servers", a.cfg.Servers, "server", a.IsServer())
	return nil
}

func (a *Agent) scanStatic(ctx context.Context) error {
	if a.cfg.Static != nil {
		a.static = *a.cfg.Static
		a.static.PEs = probe.MergePEs(nodestate.PE{Kind: "cpu", Count: a.static.Threads}, a.static.PEs, a.cfg.PEs)
		if slices.ContainsFunc(a.cfg.PEs, func(pe nodestate.PE) bool { return pe.Kind == "gpu" }) {
			a.static.GPUs = nil // declared GPUs replace the given devices, as ScanStatic's do
		}
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
	gc.OnPropagation = func(d time.Duration) {
		if m := a.propagation.Load(); m != nil {
			m.GossipConvergence.Observe(d.Seconds())
		}
	}
	st := a.static
	g, err := gossip.New(gc, nodestate.NodeState{
		RaftPort: a.RaftPort(), HTTPPort: a.HTTPPort(),
		// A server before it stopped says so at once: the leader's
		// autopilot must not take it for a stale server.
		Raft:   nodestate.RaftInfo{Member: a.raftBackend().HasState()},
		Static: a.gossipStatic(inventory(st.Static, a.cfg.Switch, a.cfg.Features)),
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

// ShutdownForRestart stops the agent to start it again at once (a
// service restart, an upgrade): the attempts that run under supervisors
// keep running and the next life adopts them (jobrun.Node.LeaveRunning),
// leadership is handed over, and the agent does not leave gossip, so the
// cluster sees a node that is back before its failure detector judges it.
// Every other job process is killed, as Shutdown kills them all.
func (a *Agent) ShutdownForRestart() error {
	if a.jobNode != nil {
		a.jobNode.LeaveRunning()
	}
	a.stopOnce.Do(func() { a.stopErr = a.stop(true, false) })
	return a.stopErr
}

func (a *Agent) shutdown(graceful bool) error { return a.stop(graceful, graceful) }

// stop stops the agent, handing leadership over first when transfer is
// set and leaving gossip when leave is.
func (a *Agent) stop(transfer, leave bool) error {
	var errs []error
	if r := a.srv.raft(); transfer && r != nil && r.State() == raft.Leader {
		// Hand leadership over first, so the cluster does not wait an
		// election timeout to notice.
		if err := r.LeadershipTransfer().Error(); err != nil {
			a.log.Warn("leadership transfer before leaving", "err", err)
		}
	}
	if leave && a.gossip != nil {
		if err := a.gossip.Leave(3 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	a.loops.cancel()
	if a.httpSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if a.httpSrv.Shutdown(ctx) != nil {
			// Streams (replication to clients, logs) outlast any grace:
			// close them, so a client follows another server at once
			// rather than hearing heartbeats from a stopped agent.
			_ = a.httpSrv.Close()
		}
		cancel()
	} else {
		a.httpLn.Close()
		if a.sockLn != nil {
			a.sockLn.Close()
		}
	}
	// After loops.cancel, under roleMu: no raft starts any more.
	a.roleMu.Lock()
	srv := a.srv.load()
	a.roleMu.Unlock()
	if srv != nil {
		if err := srv.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("shut down raft: %w", err))
		}
		srv.node.CloseTransport()
	} else {
		a.closeRaftListener()
	}
	if a.gossip != nil {
		if err := a.gossip.Shutdown(); err != nil {
			errs = append(errs, err)
		}
	}
	a.loops.wait()
	a.closeCgroups() // after the job loop, which removed its attempts' cgroups
	if srv != nil {
		if err := srv.node.CloseStore(); err != nil {
			errs = append(errs, fmt.Errorf("close raft store: %w", err))
		}
	}
	a.log.Info("agent stopped", "graceful", transfer && leave, "left_gossip", leave)
	return errors.Join(errs...)
}
