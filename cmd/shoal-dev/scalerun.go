package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/shoal-hpc/shoal/agent/rows"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
)

// scaleOpts is one bench-scale run's settings.
type scaleOpts struct {
	N      int           // agents
	Rounds int           // node-state changes timed for convergence
	Window time.Duration // steady-state window over which bytes are counted
	// Update is how often every agent changes its dynamic state in the
	// background, as an agent does each sample interval; 0 disables it.
	Update time.Duration
	Seed   uint64
	Config gossip.Config // gossip settings; Name, Transport, Logger are set per agent
	// Servers is how many of the agents run raft (the first ones: 3
	// voters, the rest non-voters); the others are clients following a
	// server's replication feed. 0 runs gossip alone.
	Servers int
	// Jobs is how many jobs are submitted and timed to their nodes.
	Jobs int
	// PeerLinks is how many random peers each node's row in the servers'
	// network table holds besides its two switch neighbours (0: all).
	PeerLinks int
	// PaceLate holds each join back until the process's timers fire less
	// than this late, and PaceOwed until the joins so far will cause
	// fewer than this many state packets more, paid off at PaceRate a
	// second (PaceLate 0: join as fast as joins succeed).
	PaceLate time.Duration
	PaceOwed int64
	PaceRate float64
	// QuietTimeout bounds the wait, after the join, for gossip to go
	// quiet; 0 = 60 s + 600 ms an agent.
	QuietTimeout time.Duration
	// Real runs whole agents (agent.Agent) on the in-memory twins instead
	// of the harness's re-wiring of their parts (scalereal.go); Bin is
	// the shoal binary they start jobs through.
	Real bool
	Bin  string
	// prof writes the size's profiles at each stage (nil: none).
	prof *scaleProfiler
	// check, when set, looks at a real run's agents before they stop
	// (the tests' evidence that they are real).
	check func(*realCluster) error
}

func (o scaleOpts) quietTimeout() time.Duration {
	if o.QuietTimeout > 0 {
		return o.QuietTimeout
	}
	return time.Minute + time.Duration(o.N)*600*time.Millisecond
}

// scaleResult is what one size measured.
type scaleResult struct {
	N           int     `json:"n"`
	MinAlive    int     `json:"min_alive"`
	JoinSeconds float64 `json:"join_s"`
	JoinRetries int     `json:"join_retries"`
	// PaceWaitS is how long joins waited for the process to keep up.
	PaceWaitS float64 `json:"pace_wait_s"`
	// PacketsDropped counts gossip packets lost to a full receive buffer.
	PacketsDropped int64   `json:"packets_dropped"`
	ConvP50ms      float64 `json:"conv_p50_ms"`
	ConvP90ms      float64 `json:"conv_p90_ms"`
	ConvMaxms      float64 `json:"conv_max_ms"`
	BytesPerNode   float64 `json:"bytes_per_node_per_s"`
	StateBytes     int     `json:"state_bytes"`
	PushPull       int     `json:"push_pull_bytes"`
	PushPullRows   int     `json:"push_pull_rows_bytes"`
	// HeapPerAgent is the heap the gossip agents hold once the cluster is
	// quiet, per agent; HeapJoined the same when every agent first saw
	// 99 % alive (the queues of states still to re-gossip included).
	HeapPerAgent float64 `json:"heap_per_agent"`
	HeapJoined   float64 `json:"heap_joined_per_agent"`
	// RSSPeak is the process's peak resident memory (VmHWM) per agent.
	RSSPeak float64 `json:"rss_peak_per_agent"`
	// QuietSeconds is how long after the join gossip took to go quiet
	// (negative: it had not when the wait gave up).
	QuietSeconds float64 `json:"quiet_s"`
	// Cores* are the CPU this process used, in cores (the machine has 2):
	// while agents joined, over the steady window, and over the timed
	// state changes.
	CoresJoin    float64 `json:"cores_join"`
	CoresWindow  float64 `json:"cores_window"`
	CoresConv    float64 `json:"cores_conv"`
	RowsPerAgent float64 `json:"rows_heap_per_agent"`

	Servers int `json:"servers"`
	// LeaderRPCs is the RPCs per second the raft leader sent over the
	// steady window (clients connected, no jobs); LeaderRPCsJobs over the
	// job rounds.
	LeaderRPCs     float64 `json:"leader_rpcs_per_s"`
	LeaderRPCsJobs float64 `json:"leader_rpcs_per_s_jobs"`
	// Elections is the raft terms begun while the rates were counted
	// (0: one leader throughout).
	Elections uint64 `json:"elections"`
	// RPCPeers is how many distinct servers the leader sent RPCs to.
	RPCPeers int `json:"rpc_peers"`
	// ReplicaHeap is the heap one client's replica (FSM, follower, its
	// stream and the server's side of it) adds; ReplicaBytes the feed
	// bytes per client per second over the window (heartbeats).
	ReplicaHeap     float64 `json:"replica_heap_per_client"`
	ReplicaBytes    float64 `json:"replica_bytes_per_client_per_s"`
	ReplicaConnects uint64  `json:"replica_connects"`
	ReplicaReadyS   float64 `json:"replica_ready_s"`
	// Jobs timed; Attempt* from submit_job proposed to the attempt held
	// by every node the job runs on; Place* the leader core's round.
	Jobs         int     `json:"jobs"`
	AttemptP50ms float64 `json:"attempt_p50_ms"`
	AttemptP90ms float64 `json:"attempt_p90_ms"`
	PlaceP50ms   float64 `json:"place_p50_ms"`
	PlaceP90ms   float64 `json:"place_p90_ms"`
	// ClientHosts counts the job hosts that were clients (the rest were
	// servers).
	ClientHosts int `json:"client_hosts"`
	TotalHosts  int `json:"total_hosts"`
	// Mode is "real" for whole agents (-real), empty for the re-wired
	// harness.
	Mode string `json:"mode,omitempty"`
	// Goroutines is the process's goroutines per agent once quiet,
	// OpenFiles its open files then, and NoFile the open-files limit the
	// run had (real mode).
	Goroutines float64 `json:"goroutines_per_agent,omitempty"`
	NoFile     uint64  `json:"nofile,omitempty"`
	OpenFiles  int     `json:"open_files,omitempty"`
	// StateChanges is the node-state changes a second, all agents
	// together, over the window (real mode: the agents' own loops).
	StateChanges float64 `json:"state_changes_per_s,omitempty"`
	// At is when the size was measured (UTC, RFC 3339).
	At string `json:"at"`
	// Settings are the harness settings the size was measured with
	// (scaleSettings), so that a table of sizes read from -results says
	// which were measured otherwise.
	Settings string `json:"settings,omitempty"`
	// Load is the machine's 1-minute load average at the start and end.
	LoadStart float64 `json:"load_start"`
	LoadEnd   float64 `json:"load_end"`
}

// countingTransport is memberlist's in-memory transport with every byte
// this agent sends counted: packets as written, streams both ways on the
// dialling side (each stream is one push/pull or fallback ping), so every
// byte is counted once.
type countingTransport struct {
	*memberlist.MockTransport
	sent *atomic.Int64
	// packets counts the packet bytes alone (no streams): what a queue
	// of states to re-gossip sends.
	packets *atomic.Int64
	// big counts the packets of bigPacket bytes or more: those that carry
	// a node state (probes and acks are a few hundred bytes at most).
	big *atomic.Int64
	// net holds the packets in flight to each agent, which a UDP socket's
	// receive buffer bounds.
	net *packetNet
}

// packetNet is the UDP-like part of the boundary: packets travel without
// the sender waiting, and a receiver that has udpBuffer packets not yet
// read drops the next ones, as a full socket buffer does. Unbounded, a
// starved receiver would get its acks seconds late instead of never, and
// the backlog would grow without end.
//
// Each receiver has one inbox, a queue of udpBuffer packets drained by one
// goroutine into memberlist's packet channel (MockTransport's is
// unbuffered). A goroutine per packet, as before, cost a stack and a
// scheduler entry per packet in flight: up to 150 per agent, 150,000
// goroutines at 1,000 agents under backlog.
type packetNet struct {
	inboxes sync.Map // address -> *inbox; read on every packet, without a lock
	dropped atomic.Int64
}

// inbox is one receiver's socket buffer.
type inbox struct {
	// queued counts the packets not yet read by the receiver, the one
	// being handed over included.
	queued atomic.Int32
	ch     chan queuedPacket
}

// queuedPacket is a packet in a receiver's buffer, with the sender's
// transport that hands it over (memberlist reads the sender's address
// from it).
type queuedPacket struct {
	from *memberlist.MockTransport
	b    []byte
	to   memberlist.Address
}

// bigPacket is the size from which a gossip packet carries a node state:
// a state is about 840 bytes of JSON, a few hundred compressed and
// encrypted; a ping or an ack with a coordinate is under 200.
const bigPacket = 300

// udpBuffer is about Linux's default UDP receive buffer (212,992 bytes)
// in gossip packets of up to 1,400 bytes.
const udpBuffer = 150

func (n *packetNet) inbox(addr string) *inbox {
	if in, ok := n.inboxes.Load(addr); ok {
		return in.(*inbox)
	}
	in, loaded := n.inboxes.LoadOrStore(addr, &inbox{ch: make(chan queuedPacket, udpBuffer)})
	if !loaded {
		go in.(*inbox).drain()
	}
	return in.(*inbox)
}

// drain hands the buffered packets to the receiver in order. A receiver
// that stopped (its memberlist shut down) keeps its drain blocked: the
// process ends soon after, as a benchmark's does.
func (in *inbox) drain() {
	for p := range in.ch {
		_, _ = p.from.WriteToAddress(p.b, p.to)
		in.queued.Add(-1)
	}
}

func (t *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress sends a packet without waiting for the receiver, as UDP
// does. MockTransport hands packets over an unbuffered channel, so two
// memberlists answering each other's pings from their packet loops would
// each wait on the other for ever; a real socket never blocks that way.
func (t *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.sent.Add(int64(len(b)))
	if t.packets != nil {
		t.packets.Add(int64(len(b)))
	}
	if t.big != nil && len(b) >= bigPacket {
		t.big.Add(1)
	}
	in := t.net.inbox(a.Addr)
	if in.queued.Add(1) > udpBuffer {
		in.queued.Add(-1)
		t.net.dropped.Add(1)
		return time.Now(), nil // lost, as UDP loses it: the sender does not know
	}
	in.ch <- queuedPacket{from: t.MockTransport, b: bytes.Clone(b), to: a} // never blocks: queued bounds it
	return time.Now(), nil
}

func (t *countingTransport) DialTimeout(addr string, d time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, d)
}

func (t *countingTransport) DialAddressTimeout(a memberlist.Address, d time.Duration) (net.Conn, error) {
	c, err := t.MockTransport.DialAddressTimeout(a, d)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: t.sent}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	c.n.Add(int64(k))
	return k, err
}

// scaleCluster is n gossip agents on one in-memory network.
type scaleCluster struct {
	// lag is how late the process's timers fire (CPU saturation); owed
	// the state packets the joins so far will still cause; paceWait the
	// time joins waited for both to fall.
	lag         *lagMeter
	owed        owedPackets
	paceWait    time.Duration
	agentsMu    sync.Mutex // appends while agents join, against the status loop's reads
	agents      []*gossip.Gossip
	sent        atomic.Int64
	packetBytes atomic.Int64 // packets alone, no streams
	bigPackets  atomic.Int64 // packets that carry a state (bigPacket)
	joinRetries atomic.Int64 // joins that failed and were tried again
	joined      atomic.Int64 // agents started and joined so far
	packets     packetNet
}

// startScaleCluster creates the agents and joins each to a random agent
// already in, as agents started one by one against any live seed would.
func startScaleCluster(ctx context.Context, o scaleOpts, started func(*scaleCluster)) (*scaleCluster, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SCALE_DEBUG") != "" {
		quiet = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	c := &scaleCluster{}
	var network memberlist.MockNetwork
	ts := make([]*countingTransport, o.N)
	// MockNetwork's maps are not safe for concurrent use: every transport
	// exists before any memberlist sends.
	for i := range ts {
		ts[i] = &countingTransport{MockTransport: network.NewTransport(agentName(i)), sent: &c.sent, packets: &c.packetBytes, big: &c.bigPackets, net: &c.packets}
	}
	c.lag = newLagMeter()
	c.owed.rate = o.PaceRate
	if started != nil {
		started(c)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	for i := range o.N {
		// Every agent re-gossips each state new to it 4·⌈log10(n+1)⌉
		// times, so the i-th join costs the cluster about 16·i packets,
		// each compressed, encrypted and decoded: on one process that
		// work adds up to n² packets, where real agents pay n each. Joined
		// faster than the two cores send them, the agents' timers fire
		// late, probes time out, and suspicion, refutation and reconnect
		// push/pulls add work until the process stalls (an unpaced
		// 1,000-agent run stalled at 640). So the next agent starts only while the process
		// keeps up: its timers fired less than PaceLate late over the last 0.5-1 s.
		c.pace(o)
		cfg := o.Config
		cfg.Name, cfg.Transport, cfg.Logger = agentName(i), ts[i], quiet
		st := syntheticState(i)
		st.Raft.Member = o.Servers == 0 || i < o.Servers // C2: clients gossip Member=false
		g, err := gossip.New(cfg, st)
		if err != nil {
			c.shutdown()
			return nil, fmt.Errorf("start agent %d of %d: %w", i, o.N, err)
		}
		c.agentsMu.Lock()
		c.agents = append(c.agents, g)
		c.agentsMu.Unlock()
		if i == 0 {
			c.joined.Add(1)
			continue
		}
		// A join that fails (its push/pull stream timed out on a starved
		// machine) is tried again against another seed, as an agent's
		// retry-join does; the failures are counted.
		for try := 1; ; try++ {
			addr, port := c.agents[rng.IntN(i)].LocalAddr()
			jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = g.Join(jctx, []string{net.JoinHostPort(addr, fmt.Sprint(port))})
			cancel()
			if err == nil {
				c.joined.Add(1)
				// The state of agent i will be re-gossiped by the i
				// agents already in, each sending it retransmitLimit
				// times.
				c.owed.add(int64(i)*int64(retransmitLimit(i+1)), &c.bigPackets)
				break
			}
			c.joinRetries.Add(1)
			if try == 5 {
				c.shutdown()
				return nil, fmt.Errorf("agent %d of %d, %d joins: %w", i, o.N, try, err)
			}
		}
	}
	return c, nil
}

func agentName(i int) string { return fmt.Sprintf("node%04d", i) }

// syntheticState is what a real agent gossips about a typical compute
// node (the probes are at the boundary: their heartbeats and row are made
// up, with real sizes). Its network row is not in it (syntheticRow): rows
// go to the servers, not through gossip.
func syntheticState(i int) nodestate.NodeState {
	s := nodestate.NodeState{
		Name:     agentName(i),
		RaftPort: 7947, HTTPPort: 7948, ProbePort: 7949,
		Static: nodestate.Static{
			Hostname: fmt.Sprintf("cn%04d.cluster.example.org", i), CPUModel: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
			Cores: 40, Threads: 80, MHz: 2100, MemTotal: 192 << 30, Switch: fmt.Sprintf("sw%02d", i/40),
			PEs:      []nodestate.PE{{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 4, MemBytes: 40 << 30}},
			Confined: true,
		},
		Dyn: nodestate.Dynamic{
			Load: nodestate.Means{Now: 12.5, M1: 11.93, M5: 10.25, M15: 9.81}, CPUUtil: nodestate.Means{Now: 0.31, M1: 0.297, M5: 0.264, M15: 0.255},
			MemAvail: nodestate.Means{Now: 1.53e11, M1: 1.529e11, M5: 1.531e11, M15: 1.532e11}, NetFlow: nodestate.Means{Now: 1.2e7, M1: 1.13e7, M5: 9.8e6, M15: 8.7e6},
			Users: 3, SampledAt: 1795000000000 + int64(i),
		},
		Probes: []nodestate.ProbeBeat{
			{Kind: "bandwidth", State: "running", PID: 40000 + i, Beat: 1795000000000},
			{Kind: "latency", State: "running", PID: 40001 + i, Beat: 1795000000000},
		},
		Raft: nodestate.RaftInfo{Member: true},
	}
	return s
}

// syntheticRow is node i's network row of peers cells (every node but
// its owner), as its probes fill it and send it to the servers.
func syntheticRow(i, peers int) nodestate.NetRow {
	r := nodestate.NetRow{Node: agentName(i), V: 1}
	for p := range peers {
		if p == i {
			p = peers // a row has every node but its owner
		}
		r.Cells = append(r.Cells, nodestate.NetEntry{
			Peer: agentName(p), RTT1us: 87, RTT5us: 91, AvailMbps: 9412.3, PeakMbps: 9561.7,
			BWAt: 1795000000000 + int64(p), RTTAt: 1795000000000 + int64(p),
		})
	}
	return r
}

// waitConverged waits until every agent sees (99 % of) every agent alive (memberlist's
// membership, whose small alive messages pack many to a packet). Holding
// every node's state takes longer: a state that only one round of
// broadcasts carried may wait for push/pull, minutes at a thousand nodes
// (docs/design/scale.md); the timed changes do not depend on it.
func (c *scaleCluster) waitConverged(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for i := 0; i < len(c.agents); {
		// 99 %: on a loaded two-core machine a few of hundreds of
		// in-process memberlists are always briefly suspect or refuted.
		if c.agents[i].NumAlive()*100 >= len(c.agents)*99 {
			i++
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v agent %d of %d sees %d alive; the fewest any agent sees: %d, agents seeing 99%%: %d",
				timeout, i, len(c.agents), c.agents[i].NumAlive(), c.minAlive(), c.seeing(99))
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
	return nil
}

// seeing counts the agents that see pct % of all alive.
func (c *scaleCluster) seeing(pct int) int {
	k := 0
	for _, g := range c.agents {
		if g.NumAlive()*100 >= len(c.agents)*pct {
			k++
		}
	}
	return k
}

// owedPackets estimates the state packets the cluster still owes for
// the joins so far: each join adds what its state's re-gossip will cost
// (an upper bound: an agent that learnt a state by push/pull does not
// re-gossip it), paid off at rate packets a second of wall time, or by the
// state packets counted if more were sent. A join's cost shows in the
// process's timers only once the agents re-gossip it, a second or so
// later: pacing on the timers alone let 380 of 1,000 agents join in 12 s
// and left the process 2 s behind for minutes.
type owedPackets struct {
	mu   sync.Mutex
	rate float64 // packets a second paid off by time alone
	owed float64
	seen int64     // the state packets counted when owed was last settled
	at   time.Time // when owed was last settled
}

// settle pays off what was sent, or what rate allows, since the last call.
func (o *owedPackets) settle(sent *atomic.Int64) int64 {
	n, now := sent.Load(), time.Now()
	paid := float64(n - o.seen)
	if !o.at.IsZero() {
		paid = max(paid, now.Sub(o.at).Seconds()*o.rate)
	}
	o.owed = max(0, o.owed-paid)
	o.seen, o.at = n, now
	return int64(math.Ceil(o.owed))
}

func (o *owedPackets) add(k int64, sent *atomic.Int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.settle(sent)
	o.owed += float64(k)
}

// waitBelow waits until fewer than limit packets are owed.
func (o *owedPackets) waitBelow(limit int64, sent *atomic.Int64) {
	for {
		o.mu.Lock()
		owed := o.settle(sent)
		o.mu.Unlock()
		if owed < limit {
			return
		}
		time.Sleep(lagTick) // polling the count, not synchronisation
	}
}

func (o *owedPackets) current(sent *atomic.Int64) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.settle(sent)
}

// retransmitLimit is how many times each agent sends a state new to it
// in a cluster of n: memberlist's 4·⌈log10(n+1)⌉ (RetransmitMult 4).
func retransmitLimit(n int) int { return 4 * int(math.Ceil(math.Log10(float64(n+1)))) }

// minAliveJoined is the fewest alive members any agent joined so far
// sees; safe while agents join.
func (c *scaleCluster) minAliveJoined() int {
	c.agentsMu.Lock()
	as := c.agents
	c.agentsMu.Unlock()
	m := len(as)
	for _, g := range as {
		m = min(m, g.NumAlive())
	}
	return m
}

// quietBytes is the packet rate, bytes per agent per second, under which
// a cluster counts as quiet: an idle agent's probes (a ping and its ack
// with a coordinate each second, and the indirect probes of the rare
// suspect) are a few hundred bytes a second, an agent sending its queued
// states 36 KiB (40 packets of about 900 bytes). Streams (push/pull, a
// few KiB a second per agent at 1,000) are not counted: they are the
// steady cluster's.
const quietBytes = 2 << 10

// waitQuiet waits until the agents send fewer than perNode packet bytes a
// second each, measured over 2 s, and reports whether they did before
// timeout.
func (c *scaleCluster) waitQuiet(perNode float64, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s0, t0 := c.packetBytes.Load(), time.Now()
		time.Sleep(2 * time.Second) // the measuring interval, not synchronisation
		rate := float64(c.packetBytes.Load()-s0) / time.Since(t0).Seconds() / float64(len(c.agents))
		if rate < perNode {
			return true
		}
	}
	return false
}

// minAlive is the fewest alive members any agent sees.
func (c *scaleCluster) minAlive() int {
	m := len(c.agents)
	for _, g := range c.agents {
		m = min(m, g.NumAlive())
	}
	return m
}

// convergence changes one agent's state and returns how long until every
// agent holds that version. Agents are swept until all have it; the time
// recorded is when the sweep saw the last one, so it overstates by at
// most one sweep (well under a millisecond per hundred agents).
func (c *scaleCluster) convergence(src int, users int, timeout time.Duration) (time.Duration, error) {
	g := c.agents[src]
	name := agentName(src)
	start := time.Now()
	g.Update(func(s *nodestate.NodeState) { s.Dyn.Users = users })
	self := g.Self()
	want, boot := self.Seq, self.Boot
	pending := make([]*gossip.Gossip, 0, len(c.agents))
	for i, a := range c.agents {
		if i != src {
			pending = append(pending, a)
		}
	}
	for len(pending) > 0 {
		left := pending[:0]
		for _, a := range pending {
			if e, ok := a.Lookup(name); !ok || e.State.Boot != boot || e.State.Seq < want {
				left = append(left, a)
			}
		}
		pending = left
		if len(pending) == 0 {
			break
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("a change of %s reached %d of %d agents in %v", name, len(c.agents)-len(pending), len(c.agents), timeout)
		}
		time.Sleep(time.Millisecond) // polling interval, not synchronisation
	}
	return time.Since(start), nil
}

// churn makes every agent change its dynamic state every period (each at
// its own phase) until stop closes, as sampling agents do.
func (c *scaleCluster) churn(period time.Duration, seed uint64, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	if period <= 0 {
		return &wg
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 2))
		step := period / time.Duration(len(c.agents))
		t := time.NewTicker(max(step, time.Millisecond))
		defer t.Stop()
		for i := 0; ; i = (i + 1) % len(c.agents) {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			load := float64(rng.IntN(4000)) / 100
			c.agents[i].Update(func(s *nodestate.NodeState) { s.Dyn.Load.Now, s.Dyn.SampledAt = load, s.Dyn.SampledAt+1 })
		}
	}()
	return &wg
}

// shutdown stops every agent, giving up on any that hangs: MockNetwork's
// sends block on a stopped agent, so a clean stop of a thousand is not
// guaranteed and a benchmark must not wait on it.
func (c *scaleCluster) shutdown() {
	if c.lag != nil {
		c.lag.stop()
	}
	var wg sync.WaitGroup
	for _, g := range c.agents {
		wg.Add(1)
		go func() { defer wg.Done(); _ = g.Shutdown() }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// heapDelta is the heap grown since before, per agent.
func heapDelta(before uint64, agents int) float64 {
	after := heapAlloc()
	if after < before {
		return 0
	}
	return float64(after-before) / float64(agents)
}

// runScale measures one size.
func runScale(ctx context.Context, o scaleOpts) (scaleResult, error) {
	r := scaleResult{N: o.N, Servers: min(o.Servers, o.N), LoadStart: loadAvg(), At: time.Now().UTC().Format(time.RFC3339)}
	// The row-table heap is measured first, while the heap is quiet: a
	// running cluster's garbage (push/pull buffers) swamps it.
	var err error
	if r.PushPull, r.PushPullRows, r.RowsPerAgent, err = pushPullSizes(o.N); err != nil {
		return r, err
	}
	before := heapAlloc()
	t0 := time.Now()
	cpuJoin := newCPUMeter()
	// What the process does while agents join and gossip settles, every
	// 10 s: the evidence when a size does not finish.
	var c *scaleCluster
	var cReady atomic.Pointer[scaleCluster]
	stopStatus := make(chan struct{})
	statusDone := make(chan struct{})
	stage := "joining"
	var stageMu sync.Mutex
	go func() {
		defer close(statusDone)
		statusLoop(10*time.Second, func() string {
			stageMu.Lock()
			st := stage
			stageMu.Unlock()
			cc := cReady.Load()
			if cc == nil {
				return st
			}
			return fmt.Sprintf("%s: %d of %d agents joined, %d joins retried, %d packets dropped, the fewest alive any agent sees %d, timers %v late, %d state packets owed",
				st, cc.joined.Load(), o.N, cc.joinRetries.Load(), cc.packets.dropped.Load(), cc.minAliveJoined(), cc.lag.recent().Round(time.Millisecond), cc.owed.current(&cc.bigPackets))
		}, stopStatus)
	}()
	endStatus := func() {
		if stopStatus != nil {
			close(stopStatus)
			<-statusDone
			stopStatus = nil
		}
	}
	defer endStatus()
	c, err = startScaleCluster(ctx, o, func(cc *scaleCluster) { cReady.Store(cc) })
	if err != nil {
		return r, err
	}
	defer c.shutdown()
	// Agents sample and publish from the start, as real ones do: a node's
	// first state is broadcast before anyone has joined it, so without
	// updates the first states would spread only by push/pull.
	stop := make(chan struct{})
	wg := c.churn(o.Update, o.Seed, stop)
	defer func() { close(stop); wg.Wait() }()
	stageMu.Lock()
	stage = "waiting for every agent to see 99% alive"
	stageMu.Unlock()
	if err := c.waitConverged(90*time.Second + time.Duration(o.N)*300*time.Millisecond); err != nil {
		return r, err
	}
	r.JoinSeconds, r.JoinRetries, r.PaceWaitS = time.Since(t0).Seconds(), int(c.joinRetries.Load()), c.paceWait.Seconds()
	r.CoresJoin = cpuJoin.cores()
	progress("every agent sees 99%% of %d alive after %.0f s (%.2f cores)", o.N, r.JoinSeconds, r.CoresJoin)
	r.HeapJoined = heapDelta(before, o.N)
	o.prof.stage("joined")
	if o.Update == 0 {
		// Every agent re-gossips each state new to it (retransmitted
		// 4·⌈log10(n+1)⌉ times), so a cluster that has just formed still
		// sends its members' states for a while: n² queued states in all,
		// 40 a second per agent. The figures are the steady cluster's:
		// wait until it is quiet.
		stageMu.Lock()
		stage = "waiting for gossip to go quiet"
		stageMu.Unlock()
		t1 := time.Now()
		quiet := c.waitQuiet(quietBytes, o.quietTimeout())
		r.QuietSeconds = time.Since(t1).Seconds()
		if !quiet {
			r.QuietSeconds = -r.QuietSeconds
			progress("gossip not quiet after %.0f s: measuring anyway", -r.QuietSeconds)
		} else {
			progress("gossip quiet after %.0f s more", r.QuietSeconds)
		}
	}
	endStatus()
	r.HeapPerAgent = heapDelta(before, o.N)
	o.prof.stage("quiet")

	var cl *clientLayout
	if r.Servers > 0 {
		if cl, err = startClientLayout(c, o, &r); err != nil {
			return r, err
		}
		defer cl.stop()
	}

	if cl != nil {
		progress("raft among %d servers, %d client replicas caught up in %.1f s", r.Servers, o.N-r.Servers, r.ReplicaReadyS)
	}
	// Bytes and the leader's RPCs over a steady window, with the
	// background changes running and every client following a server.
	sent0, w0 := c.sent.Load(), time.Now()
	cpuWindow := newCPUMeter()
	var fed0 int64
	if cl != nil {
		fed0 = cl.replicas.sent.Load()
		if r.LeaderRPCs, r.Elections, err = cl.raft.leaderRPCRate(o.Window, nil); err != nil {
			return r, err
		}
	} else {
		select {
		case <-time.After(o.Window):
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
	secs := time.Since(w0).Seconds()
	r.CoresWindow = cpuWindow.cores()
	r.BytesPerNode = float64(c.sent.Load()-sent0) / float64(o.N) / secs
	if cl != nil && o.N > r.Servers {
		r.ReplicaBytes = float64(cl.replicas.sent.Load()-fed0) / float64(o.N-r.Servers) / secs
	}

	progress("window: %s gossip/node/s, leader %.0f RPCs/s", humanBytes(r.BytesPerNode), r.LeaderRPCs)
	if cl != nil && o.Jobs > 0 {
		if err := cl.timeJobs(o.Jobs, &r); err != nil {
			return r, err
		}
		progress("%d jobs: submit->attempt p50 %.0f ms p90 %.0f ms, placement p50 %.1f ms", r.Jobs, r.AttemptP50ms, r.AttemptP90ms, r.PlaceP50ms)
	}

	ds, cores, err := c.convergenceRounds(o)
	if err != nil {
		return r, err
	}
	r.CoresConv = cores
	o.prof.stage("end")
	if hwm, err := peakRSSKiB(); err == nil {
		r.RSSPeak = float64(hwm) * 1024 / float64(o.N)
	}
	r.ConvP50ms = msf(median(ds))
	r.ConvP90ms = msf(pct(ds, 0.9))
	r.ConvMaxms = msf(pct(ds, 1))
	r.MinAlive = c.minAlive()
	if cl != nil {
		r.RPCPeers = cl.raft.rpcPeers()
	}
	r.PacketsDropped = c.packets.dropped.Load()
	if cl != nil {
		for _, f := range cl.replicas.followers {
			r.ReplicaConnects += f.Stats().Connects
		}
	}

	one := syntheticState(0)
	b, err := nodestate.EncodeState(&one)
	if err != nil {
		return r, err
	}
	r.StateBytes = len(b)
	r.LoadEnd = loadAvg()
	return r, nil
}

// progress tells the parent's terminal how a long size is going, with the
// machine's load: the evidence when a size does not finish.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "  %s  "+format+" (load %.1f)\n", append(append([]any{time.Now().UTC().Format("15:04:05")}, args...), loadAvg())...)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAvg is the machine's 1-minute load average, 0 when unreadable.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscan(string(b), &l)
	return l
}

// clientLayout is the servers-and-clients layout on top of the gossip cluster: raft
// among the first o.Servers agents, every other agent a client with a
// replica of the state, and an observer of attempts on every agent.
type clientLayout struct {
	raft     *raftCluster
	replicas *replicaSet
	jobs     *jobBench
	stopObs  chan struct{}
}

func startClientLayout(c *scaleCluster, o scaleOpts, r *scaleResult) (*clientLayout, error) {
	cl := &clientLayout{replicas: newReplicaSet(r.Servers), stopObs: make(chan struct{})}
	observers := map[string]*observer{}
	names := make([]string, r.Servers)
	for i := range names {
		names[i] = agentName(i)
	}
	rc, err := startRaftCluster(names, min(3, r.Servers), func(i int, f *hookedFSM) {
		cl.replicas.hook(i, f)
		o := newObserver(names[i], f.FSM)
		observers[names[i]] = o
		f.wake = o.wake
	})
	if err != nil {
		return nil, err
	}
	cl.raft = rc
	if _, err := rc.waitReady(60 * time.Second); err != nil {
		cl.stop()
		return nil, err
	}
	clients := make([]string, 0, o.N-r.Servers)
	for i := r.Servers; i < o.N; i++ {
		clients = append(clients, agentName(i))
	}
	before := heapAlloc()
	t0 := time.Now()
	if err := cl.replicas.start(rc, clients, observers, 60*time.Second+time.Duration(len(clients))*100*time.Millisecond); err != nil {
		cl.stop()
		return nil, err
	}
	r.ReplicaReadyS = time.Since(t0).Seconds()
	if len(clients) > 0 {
		r.ReplicaHeap = heapDelta(before, len(clients))
	}
	for _, ob := range observers {
		go ob.run(cl.stopObs)
	}
	byName := map[string]*gossip.Gossip{}
	for i, g := range c.agents {
		byName[agentName(i)] = g
	}
	cl.jobs = &jobBench{raft: rc, gossip: func(name string) *gossip.Gossip { return byName[name] },
		rows: syntheticRows(o.N, o.PeerLinks, o.Seed), observers: observers}
	return cl, nil
}

// timeJobs runs n job rounds and records their figures and the leader's
// RPC rate over them.
func (cl *clientLayout) timeJobs(n int, r *scaleResult) error {
	var attempt, place []time.Duration
	var roundErr error
	rate, elections, err := cl.raft.leaderRPCRate(0, func() {
		for k := range n {
			jt, err := cl.jobs.round(k, 60*time.Second)
			if err != nil {
				roundErr = err
				return
			}
			attempt, place = append(attempt, jt.Attempt), append(place, jt.Place)
			r.TotalHosts += len(jt.Hosts)
			for _, h := range jt.Hosts {
				if !cl.raft.isServer(h) {
					r.ClientHosts++
				}
			}
		}
	})
	if roundErr != nil {
		return roundErr
	}
	if err != nil {
		return err
	}
	r.Jobs, r.LeaderRPCsJobs, r.Elections = len(attempt), rate, r.Elections+elections
	r.AttemptP50ms, r.AttemptP90ms = msf(median(attempt)), msf(pct(attempt, 0.9))
	r.PlaceP50ms, r.PlaceP90ms = msf(median(place)), msf(pct(place, 0.9))
	return nil
}

func (cl *clientLayout) stop() {
	close(cl.stopObs)
	cl.replicas.stop()
	cl.raft.shutdown()
}

// pushPullSizes encodes the push/pull payload of an n-node cluster (what
// gossip's LocalState sends: every live node's state, no rows), the same
// payload as it was while states carried every node's full network row
// (the "with rows" column), and measures the
// heap a server's row table (agent/rows) needs for n full rows. Rows are
// not in the live run: n full rows are n² cells.
func pushPullSizes(n int) (plain, withRows int, rowHeap float64, err error) {
	ss := make([]nodestate.NodeState, n)
	for i := range ss {
		ss[i] = syntheticState(i)
	}
	b, err := nodestate.EncodeStates(ss)
	if err != nil {
		return 0, 0, 0, err
	}
	plain = len(b)
	before := heapAlloc()
	t := rows.NewTable()
	for i := range n {
		if _, err := t.Put(syntheticRow(i, n-1), time.Time{}); err != nil {
			return 0, 0, 0, err
		}
	}
	rowHeap = heapDelta(before, 1)
	legacy := make([]legacyState, 0, n)
	for i, r := range t.All() {
		legacy = append(legacy, legacyState{NodeState: ss[i], Net: r.Cells, NetV: 1})
	}
	lb, err := json.Marshal(legacy)
	if err != nil {
		return 0, 0, 0, err
	}
	runtime.KeepAlive(t)
	return plain, len(lb) + 2, rowHeap, nil // + gossip's type and version bytes
}

// legacyState is a state as agents sent it while rows travelled in
// gossip (the row inline, its version beside it).
type legacyState struct {
	nodestate.NodeState
	Net  []nodestate.NetEntry `json:"net,omitempty"`
	NetV uint64               `json:"nv,omitempty"`
}

// pace waits, when o paces joins, until the process keeps up with the
// joins so far (the join loop of startScaleCluster says why).
func (c *scaleCluster) pace(o scaleOpts) {
	if o.PaceLate <= 0 {
		return
	}
	t := time.Now()
	c.owed.waitBelow(o.PaceOwed, &c.bigPackets)
	c.lag.waitBelow(o.PaceLate)
	c.paceWait += time.Since(t)
}

// convergenceRounds times o.Rounds node-state changes, each from a random
// agent to every agent, and the cores the process used meanwhile.
func (c *scaleCluster) convergenceRounds(o scaleOpts) ([]time.Duration, float64, error) {
	rng := rand.New(rand.NewPCG(o.Seed, 3))
	var ds []time.Duration
	cpu := newCPUMeter()
	for k := range o.Rounds {
		d, err := c.convergence(rng.IntN(o.N), 1000+k, 30*time.Second)
		if err != nil {
			return ds, 0, err
		}
		ds = append(ds, d)
	}
	return ds, cpu.cores(), nil
}
