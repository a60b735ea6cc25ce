package agent

import (
	"context"
	"crypto/tls"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/tlsca"
)

// probeManager is the node side of issue 5: it runs the probe server,
// keeps one process per probe kind at the generation raft wants (the
// node's reconciler), feeds the latency probe its peers and the bandwidth
// probe its duties, folds their measurements into this node's gossiped
// row, and gossips their heartbeats for the leader to watch.
type probeManager struct {
	a    *Agent
	cfg  ProbesConfig
	key  []byte
	srv  *probe.Server
	row  *netRow
	wake chan struct{}

	mu        sync.Mutex
	procs     map[string]*probeProc
	peers     []probePeer // last list sent to the latency probe
	published []gossip.ProbeBeat

	// duties
	testID    uint64
	dutyDone  map[dutyKey]bool
	pendingBW map[uint64]string // test id → peer
}

type dutyKey struct {
	cycle uint64
	setAt time.Time
	round int
}

// probeKey derives the key that authenticates the probe port.
func probeKey(token string) []byte { return derive(token, "probe") }

// startProbes starts the probe server, the probe processes and their
// supervision (issue 5). Called from Start after sampling begins.
func (a *Agent) startProbes() {
	cfg := a.cfg.Probes.orDefault()
	m := &probeManager{
		a: a, cfg: cfg, key: probeKey(a.cfg.Token), row: newNetRow(), wake: make(chan struct{}, 1),
		procs: map[string]*probeProc{}, dutyDone: map[dutyKey]bool{}, pendingBW: map[uint64]string{},
	}
	a.probes = m
	srv, err := probe.Listen(a.cfg.BindAddr, cfg.Port, probe.ServerConfig{
		Key: m.key, MaxBytes: cfg.BandwidthBytes, Timeout: cfg.BandwidthTimeout, Logger: a.log,
		OnTest: func(from string, r probe.BandwidthResult) { m.row.addBW(from, r.At, r.Mbps()) },
		// The request and its HMAC go inside TLS; the client is
		// authenticated by that HMAC, as before.
		TLS: tlsca.ServerConfig(a.tls.roots, a.tls.leaf, tls.NoClientCert),
	})
	if err != nil {
		// Without a server this node is left out of bandwidth schedules
		// (it gossips no probe port); everything else works.
		a.log.Error("probe server not started: this node gets no bandwidth tests", "err", err)
	} else {
		m.srv = srv
		a.gossip.Update(func(s *gossip.NodeState) { s.ProbePort = srv.Port() })
	}
	a.goLoop("probes", m.loop)
	a.goLoop("probe-duties", m.dutyLoop)
}

// ProbePort is the bound probe port, 0 when the server did not start.
func (a *Agent) ProbePort() int {
	if a.probes == nil || a.probes.srv == nil {
		return 0
	}
	return a.probes.srv.Port()
}

func (m *probeManager) wakeUp() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *probeManager) loop(ctx context.Context) {
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
		m.reconcile()
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
func (m *probeManager) desired() map[string]raftfsm.Probe {
	out := map[string]raftfsm.Probe{}
	m.a.fsm.View(func(s *raftfsm.State) {
		for _, k := range raftfsm.ProbeKinds {
			if p, ok := s.Probes[raftfsm.ProbeKey{Node: m.a.cfg.Name, Kind: k}]; ok {
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
func (m *probeManager) reconcile() {
	want := m.desired()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, kind := range raftfsm.ProbeKinds {
		d := want[kind]
		p := m.procs[kind]
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
			m.a.log.Info("relaunching probe on the leader's order", "probe", kind, "generation", d.Generation, "reason", d.LastReason)
			p.kill()
		}
		np, err := m.launchProbe(kind, d.Generation, m.onMsg)
		if err != nil {
			m.a.log.Error("start probe", "probe", kind, "err", err)
			np = &probeProc{kind: kind, gen: d.Generation, started: time.Now(), done: make(chan struct{}), kill: func() {}}
			close(np.done)
		} else {
			np.send(m.configMsg(kind))
			if kind == raftfsm.ProbeLatency && len(m.peers) > 0 {
				np.send(probeMsg{Type: msgPeers, Peers: m.peers})
			}
		}
		m.procs[kind] = np
	}
}

func (m *probeManager) configMsg(kind string) probeMsg {
	return probeMsg{Type: msgConfig, Kind: kind, Node: m.a.cfg.Name, Key: m.key, CA: m.a.tls.caPEM(),
		BeatMS: m.cfg.BeatInterval.Milliseconds(), SampleMS: m.a.cfg.SampleInterval.Milliseconds(),
		LatencyMS: m.cfg.LatencyInterval.Milliseconds(), TimeoutMS: m.cfg.BandwidthTimeout.Milliseconds()}
}

func (m *probeManager) proc(kind string) *probeProc {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.procs[kind]
}

// onMsg handles one message of a probe, on that probe's reader goroutine.
func (m *probeManager) onMsg(p *probeProc, msg probeMsg) {
	now := time.Now()
	p.beat(now) // any message shows the probe is alive
	switch msg.Type {
	case msgSample:
		if msg.Sample != nil {
			m.a.ingestSample(*msg.Sample)
		}
	case msgRTT:
		for _, r := range msg.RTTs {
			m.row.addRTT(r.Peer, now, time.Duration(r.US)*time.Microsecond)
		}
	case msgBW:
		m.mu.Lock()
		peer, ok := m.pendingBW[msg.ID]
		delete(m.pendingBW, msg.ID)
		m.mu.Unlock()
		if !ok || peer != msg.Peer {
			return
		}
		if msg.Err != "" {
			m.a.log.Warn("bandwidth test failed", "peer", msg.Peer, "err", msg.Err)
			return
		}
		r := probe.BandwidthResult{Bytes: msg.Bytes, Elapsed: time.Duration(msg.NS), At: now}
		m.row.addBW(msg.Peer, now, r.Mbps())
	}
}

// livePeers lists alive nodes with a probe server, but not this one.
func (m *probeManager) livePeers() []probePeer {
	var out []probePeer
	for _, e := range m.a.gossip.Nodes() {
		s := e.State
		if e.Status != gossip.StatusAlive || !e.HasState || s.Name == m.a.cfg.Name || s.ProbePort == 0 || s.Addr == "" {
			continue
		}
		out = append(out, probePeer{Name: s.Name, Addr: net.JoinHostPort(s.Addr, strconv.Itoa(s.ProbePort))})
	}
	return out
}

// sendPeers tells the latency probe whom to ping when that changes.
func (m *probeManager) sendPeers() {
	peers := m.livePeers()
	m.mu.Lock()
	same := slices.Equal(peers, m.peers)
	p := m.procs[raftfsm.ProbeLatency]
	m.mu.Unlock()
	if same || p == nil {
		return
	}
	if p.send(probeMsg{Type: msgPeers, Peers: peers}) {
		m.mu.Lock()
		m.peers = peers
		m.mu.Unlock()
	}
}

// publish gossips the probes' heartbeats and the network row when they
// changed; heartbeats are coarsened to the beat interval so the gossip
// rate stays one update per beat interval at most.
func (m *probeManager) publish() {
	var beats []gossip.ProbeBeat
	m.mu.Lock()
	for _, kind := range raftfsm.ProbeKinds {
		p := m.procs[kind]
		if p == nil {
			continue
		}
		st, last := p.status()
		b := gossip.ProbeBeat{Kind: kind, State: st, PID: p.pid, Restarts: int(p.gen)}
		if !last.IsZero() {
			b.Beat = last.Truncate(m.cfg.BeatInterval).UnixMilli()
		}
		beats = append(beats, b)
	}
	same := slices.Equal(beats, m.published)
	m.mu.Unlock()
	row, rowChanged := m.row.take(time.Now(), m.known())
	if same && !rowChanged {
		return
	}
	m.a.gossip.Update(func(s *gossip.NodeState) {
		s.Probes = beats
		if rowChanged {
			s.Net = row
		}
	})
	m.mu.Lock()
	m.published = beats
	m.mu.Unlock()
}

// known reports whether gossip still lists a node (not yet reaped), so
// the row forgets nodes gone for good.
func (m *probeManager) known() func(string) bool {
	names := map[string]bool{}
	for _, e := range m.a.gossip.Nodes() {
		names[e.State.Name] = true
	}
	return func(n string) bool { return names[n] }
}
