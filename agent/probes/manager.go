package probes

import (
	"context"
	"crypto/tls"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/probes/child"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Gossip is what the manager needs of the gossip layer: the nodes it
// knows and this node's state to update.
type Gossip interface {
	Nodes() []nodestate.Entry
	Update(fn func(*nodestate.NodeState))
}

// State reads the replicated state (raftfsm.FSM's View): the probes'
// generations and the bandwidth duties.
type State interface {
	View(fn func(*raftfsm.State))
}

// Deps is what a Manager is built from.
type Deps struct {
	// Config tunes the probes; the zero value stands for DefaultConfig.
	Config Config
	// Node is this node's name; BindAddr the IP the probe server binds.
	Node, BindAddr string
	// Bin is the shoal executable run as `shoal probe KIND`; empty runs
	// the probes in-process.
	Bin string
	// SampleInterval is the nodestate probe's sampling period.
	SampleInterval time.Duration
	// Sampler, when set, is the node's state source, run in-process.
	Sampler probe.Sampler
	// Key authenticates the probe port (derived from the cluster token).
	Key []byte
	// ServerTLS is the probe server's TLS configuration; CAPEM the trusted
	// CA certificates the bandwidth probe verifies its peers with.
	ServerTLS *tls.Config
	CAPEM     []byte
	Gossip    Gossip
	State     State
	// PublishDynamic gossips the node's running means after each sample.
	PublishDynamic func(nodestate.Dynamic)
	// PublishRow hands this node's network row to whatever carries it to
	// the servers (agent/rows' Sender.Set), each time it changed. The row
	// does not travel in gossip: it grows with the cluster.
	PublishRow func([]nodestate.NetEntry)
	// Now is the clock (default time.Now); Log the logger.
	Now func() time.Time
	Log *slog.Logger
}

// Manager is the node side of the network probes: it runs the probe server,
// keeps one process per probe kind at the generation raft wants (the
// node's reconciler), feeds the latency probe its peers and the bandwidth
// probe its duties, folds their measurements into this node's network
// row (published through Deps.PublishRow), and gossips their heartbeats for the leader to watch.
type Manager struct {
	d Deps
	// cfg is the probe settings; its Tuning part changes under mu
	// (Retune), the rest is fixed.
	cfg  Config
	log  *slog.Logger
	now  func() time.Time
	srv  *probe.Server
	row  *netRow
	smp  *samples
	wake chan struct{}

	mu        sync.Mutex
	procs     map[string]*probeProc
	peers     []child.Peer // last list sent to the latency probe
	published []nodestate.ProbeBeat

	// duties
	testID    uint64
	dutyDone  map[dutyKey]bool
	pendingBW map[uint64]string // test id → peer
	lc        linkChecks
}

type dutyKey struct {
	cycle uint64
	setAt time.Time
	round int
}

// New builds a manager; Start starts it.
func New(d Deps) *Manager {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{
		d: d, cfg: d.Config.OrDefault(), log: d.Log, now: d.Now, row: newNetRow(),
		smp: newSamples(d.PublishDynamic), wake: make(chan struct{}, 1),
		procs: map[string]*probeProc{}, dutyDone: map[dutyKey]bool{}, pendingBW: map[uint64]string{},
		lc: linkChecks{pending: map[uint64]string{}},
	}
	m.smp.inTest = m.testing
	return m
}

// testing reports whether one of this node's bandwidth tests or link
// checks runs now, as client or as server. The server is set in Start,
// before any probe's sample arrives.
func (m *Manager) testing() bool {
	if m.srv != nil && m.srv.Testing() {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pendingBW) > 0 || len(m.lc.pending) > 0
}

// Start takes a first sample when the sampler runs in this process (so
// the node's first gossiped state already has its load) and starts the
// probe server. The probes themselves start in Run.
func (m *Manager) Start(ctx context.Context) {
	m.firstSample(ctx)
	srv, err := probe.Listen(m.d.BindAddr, m.cfg.Port, probe.ServerConfig{
		Key: m.d.Key, MaxBytes: m.cfg.BandwidthBytes, Timeout: m.cfg.BandwidthTimeout, Logger: m.log,
		// The server received the forward half (in) and sent the reverse (out).
		OnTest: func(from string, r probe.BandwidthResult) {
			if r.Check { // a peer's link check: no test of the pair
				m.smp.testBytes(r.Bytes, r.RevBytes)
				return
			}
			m.row.addBW(from, r.At, dirReading{r.RevMbps(), r.RevCarried}, dirReading{r.Mbps(), r.Carried})
			m.smp.testBytes(r.Bytes, r.RevBytes)
		},
		// What else crossed this end's link during each test; none over
		// loopback (an in-process cluster).
		Counters: probe.InterfaceCounters,
		// The request and its HMAC go inside TLS; the client is
		// authenticated by that HMAC, as before.
		TLS: m.d.ServerTLS,
	})
	if err != nil {
		// Without a server this node is left out of bandwidth schedules
		// (it gossips no probe port); everything else works.
		m.log.Error("probe server not started: this node gets no bandwidth tests", "err", err)
	} else {
		m.srv = srv
		m.d.Gossip.Update(func(s *nodestate.NodeState) { s.ProbePort = srv.Port() })
	}
}

// Port is the bound probe port, 0 when the server did not start.
func (m *Manager) Port() int {
	if m == nil || m.srv == nil {
		return 0
	}
	return m.srv.Port()
}

func (m *Manager) wakeUp() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Run keeps the probes matching raft until ctx ends, then kills them and
// closes the probe server.
func (m *Manager) Run(ctx context.Context) {
	defer func() {
		m.mu.Lock()
		for _, p := range m.procs {
			p.kill()
		}
		m.mu.Unlock()
		if m.srv != nil {
			m.srv.Close()
		}
	}()
	t := time.NewTicker(min(m.cfg.BeatInterval, 250*time.Millisecond))
	defer t.Stop()
	for {
		m.reconcile(ctx)
		m.sendPeers()
		m.publish()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.wake:
		}
	}
}

// desired reads raft's generation for each of this node's probes.
func (m *Manager) desired() map[string]raftfsm.Probe {
	out := map[string]raftfsm.Probe{}
	m.d.State.View(func(s *raftfsm.State) {
		for _, k := range raftfsm.ProbeKinds {
			if p, ok := s.Probes[raftfsm.ProbeKey{Node: m.d.Node, Kind: k}]; ok {
				out[k] = *p
			}
		}
	})
	return out
}

// reconcile makes the running probes match raft: start what is missing,
// kill and restart a probe whose relaunch the leader ordered. A probe
// that exited stays down until the leader orders its relaunch, so that
// every relaunch is recorded and backed off in one place.
func (m *Manager) reconcile(ctx context.Context) {
	want := m.desired()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, kind := range raftfsm.ProbeKinds {
		d := want[kind]
		p := m.procs[kind]
		if p != nil && p.tuning != m.cfg.Tuning() && !p.exited() && p.send(m.configMsg(kind)) {
			p.tuning = m.cfg.Tuning() // else the next round tries again
		}
		switch {
		case p == nil:
		case p.gen > d.Generation:
			p.gen = d.Generation // raft forgot this probe (remove_node): start counting again
			continue
		case p.gen == d.Generation:
			continue
		case !p.exited() && d.LastRestartAt.Before(p.started):
			p.gen = d.Generation // an order for an earlier incarnation (raft caught up after start)
			continue
		default:
			m.log.Info("relaunching probe on the leader's order", "probe", kind, "generation", d.Generation, "reason", d.LastReason)
			p.kill()
		}
		np, err := m.launchProbe(ctx, kind, d.Generation, m.onMsg)
		if err != nil {
			m.log.Error("start probe", "probe", kind, "err", err)
			np = &probeProc{kind: kind, gen: d.Generation, started: m.now(), done: make(chan struct{}), kill: func() {}}
			close(np.done)
		} else {
			np.send(m.configMsg(kind))
			np.tuning = m.cfg.Tuning()
			if kind == raftfsm.ProbeLatency && len(m.peers) > 0 {
				np.send(child.Msg{Type: child.TypePeers, Peers: m.peers})
			}
		}
		m.procs[kind] = np
	}
}

// Retune takes on a SIGHUP's probe settings: the probe server's test
// size and timeout at once, the running probes by a new config line at
// the next reconcile round (which retries while a probe's queue is
// full), and probes started later from their first line.
func (m *Manager) Retune(t Tuning) {
	m.mu.Lock()
	old := m.cfg.Tuning()
	// Field by field: Run reads BeatInterval without the lock.
	m.cfg.LatencyInterval, m.cfg.BandwidthBytes, m.cfg.BandwidthTimeout = t.LatencyInterval, t.BandwidthBytes, t.BandwidthTimeout
	m.mu.Unlock()
	if m.srv != nil {
		m.srv.SetLimits(t.BandwidthBytes, t.BandwidthTimeout)
	}
	if old != t {
		m.log.Info("probe settings changed; telling the running probes", "latency_interval", t.LatencyInterval,
			"bandwidth_bytes", t.BandwidthBytes, "bandwidth_timeout", t.BandwidthTimeout)
		m.wakeUp()
	}
}

// configMsg is kind's config line; m.mu is held.
func (m *Manager) configMsg(kind string) child.Msg {
	return child.Msg{Type: child.TypeConfig, Kind: kind, Node: m.d.Node, Key: m.d.Key, CA: m.d.CAPEM,
		BeatMS: m.cfg.BeatInterval.Milliseconds(), SampleMS: m.d.SampleInterval.Milliseconds(),
		LatencyMS: m.cfg.LatencyInterval.Milliseconds(), TimeoutMS: m.cfg.BandwidthTimeout.Milliseconds()}
}

func (m *Manager) proc(kind string) *probeProc {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.procs[kind]
}

// onMsg handles one message of a probe, on that probe's reader goroutine.
func (m *Manager) onMsg(p *probeProc, msg child.Msg) {
	now := m.now()
	p.beat(now) // any message shows the probe is alive
	switch msg.Type {
	case child.TypeSample:
		if msg.Sample != nil {
			m.smp.ingest(*msg.Sample)
		}
	case child.TypeRTT:
		for _, r := range msg.RTTs {
			m.row.addRTT(r.Peer, now, time.Duration(r.US)*time.Microsecond)
		}
	case child.TypeBW:
		if msg.Check {
			m.checked(msg, now)
			return
		}
		m.mu.Lock()
		peer, ok := m.pendingBW[msg.ID]
		delete(m.pendingBW, msg.ID)
		m.mu.Unlock()
		if !ok || peer != msg.Peer {
			return
		}
		if msg.Err != "" {
			m.log.Warn("bandwidth test failed", "peer", msg.Peer, "err", msg.Err)
			return
		}
		r := probe.BandwidthResult{Bytes: msg.Bytes, Elapsed: time.Duration(msg.NS), At: now,
			RevBytes: msg.RevBytes, RevElapsed: time.Duration(msg.RevNS)}
		// This node sent the forward half (out) and received the reverse (in).
		m.row.addBW(msg.Peer, now, dirReading{r.Mbps(), msg.Carried}, dirReading{r.RevMbps(), msg.RevCarried})
		m.smp.testBytes(r.RevBytes, r.Bytes)
	}
}

// livePeers lists alive nodes with a probe server, but not this one.
func (m *Manager) livePeers() []child.Peer {
	var out []child.Peer
	for _, e := range m.d.Gossip.Nodes() {
		s := &e.State
		if e.Status != nodestate.StatusAlive || !e.HasState || s.Name == m.d.Node || s.ProbePort == 0 || s.Addr == "" {
			continue
		}
		out = append(out, child.Peer{Name: s.Name, Addr: net.JoinHostPort(s.Addr, strconv.Itoa(s.ProbePort))})
	}
	return out
}

// latencyPeers is the latency probe's bounded share of the live peers
// (chooseLatencyPeers): its own switch, uncertain coordinates, a few others.
func (m *Manager) latencyPeers() []child.Peer {
	var inferred map[string]string
	if m.d.State != nil {
		m.d.State.View(func(st *raftfsm.State) { inferred = maps.Clone(st.Switches) })
	}
	switchOf := func(s *nodestate.NodeState) string {
		if s.Static.Switch != "" {
			return s.Static.Switch
		}
		return inferred[s.Name]
	}
	var cands []latencyCandidate
	selfSwitch := ""
	for _, e := range m.d.Gossip.Nodes() {
		s := &e.State
		if s.Name == m.d.Node {
			selfSwitch = switchOf(s)
		}
		if e.Status != nodestate.StatusAlive || !e.HasState || s.Name == m.d.Node || s.ProbePort == 0 || s.Addr == "" {
			continue
		}
		c := latencyCandidate{Peer: child.Peer{Name: s.Name, Addr: net.JoinHostPort(s.Addr, strconv.Itoa(s.ProbePort))}, Switch: switchOf(s)}
		if s.Coord != nil {
			c.Coord, c.CoordErr = true, s.Coord.Error
		}
		cands = append(cands, c)
	}
	return chooseLatencyPeers(m.d.Node, selfSwitch, cands, m.cfg.LatencyPeers)
}

// sendPeers tells the latency probe whom to ping when that changes.
func (m *Manager) sendPeers() {
	peers := m.latencyPeers()
	m.mu.Lock()
	same := slices.Equal(peers, m.peers)
	p := m.procs[raftfsm.ProbeLatency]
	m.mu.Unlock()
	if same || p == nil {
		return
	}
	if p.send(child.Msg{Type: child.TypePeers, Peers: peers}) {
		m.mu.Lock()
		m.peers = peers
		m.mu.Unlock()
	}
}

// publish gossips the probes' heartbeats and hands the network row to
// PublishRow, each when it changed; heartbeats are coarsened to the beat interval so the gossip
// rate stays one update per beat interval at most.
func (m *Manager) publish() {
	var beats []nodestate.ProbeBeat
	m.mu.Lock()
	for _, kind := range raftfsm.ProbeKinds {
		p := m.procs[kind]
		if p == nil {
			continue
		}
		st, last := p.status()
		b := nodestate.ProbeBeat{Kind: kind, State: st, PID: p.pid, Restarts: int(p.gen)}
		if !last.IsZero() {
			b.Beat = last.Truncate(m.cfg.BeatInterval).UnixMilli()
		}
		beats = append(beats, b)
	}
	same := slices.Equal(beats, m.published)
	m.mu.Unlock()
	row, rowChanged := m.row.take(m.now(), m.known())
	if same && !rowChanged {
		return
	}
	if rowChanged && m.d.PublishRow != nil {
		m.d.PublishRow(row)
	}
	if same {
		return
	}
	m.d.Gossip.Update(func(s *nodestate.NodeState) { s.Probes = beats })
	m.mu.Lock()
	m.published = beats
	m.mu.Unlock()
}

// known reports whether gossip still lists a node (not yet reaped), so
// the row forgets nodes gone for good.
func (m *Manager) known() func(string) bool {
	names := map[string]bool{}
	for _, e := range m.d.Gossip.Nodes() {
		names[e.State.Name] = true
	}
	return func(n string) bool { return names[n] }
}
