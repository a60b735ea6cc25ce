package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
}

// scaleResult is what one size measured.
type scaleResult struct {
	N            int     `json:"n"`
	MinAlive     int     `json:"min_alive"`
	JoinSeconds  float64 `json:"join_s"`
	ConvP50ms    float64 `json:"conv_p50_ms"`
	ConvP90ms    float64 `json:"conv_p90_ms"`
	ConvMaxms    float64 `json:"conv_max_ms"`
	BytesPerNode float64 `json:"bytes_per_node_per_s"`
	StateBytes   int     `json:"state_bytes"`
	PushPull     int     `json:"push_pull_bytes"`
	PushPullRows int     `json:"push_pull_rows_bytes"`
	HeapPerAgent float64 `json:"heap_per_agent"`
	RowsPerAgent float64 `json:"rows_heap_per_agent"`
}

// countingTransport is memberlist's in-memory transport with every byte
// this agent sends counted: packets as written, streams both ways on the
// dialling side (each stream is one push/pull or fallback ping), so every
// byte is counted once.
type countingTransport struct {
	*memberlist.MockTransport
	sent *atomic.Int64
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
	p := bytes.Clone(b)
	go func() { _, _ = t.MockTransport.WriteToAddress(p, a) }()
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
	agents []*gossip.Gossip
	sent   atomic.Int64
}

// startScaleCluster creates the agents and joins each to a random agent
// already in, as agents started one by one against any live seed would.
func startScaleCluster(ctx context.Context, o scaleOpts) (*scaleCluster, error) {
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
		ts[i] = &countingTransport{MockTransport: network.NewTransport(agentName(i)), sent: &c.sent}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	for i := range o.N {
		cfg := o.Config
		cfg.Name, cfg.Transport, cfg.Logger = agentName(i), ts[i], quiet
		g, err := gossip.New(cfg, syntheticState(i))
		if err != nil {
			c.shutdown()
			return nil, fmt.Errorf("start agent %d of %d: %w", i, o.N, err)
		}
		c.agents = append(c.agents, g)
		if i == 0 {
			continue
		}
		addr, port := c.agents[rng.IntN(i)].LocalAddr()
		jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = g.Join(jctx, []string{net.JoinHostPort(addr, fmt.Sprint(port))})
		cancel()
		if err != nil {
			c.shutdown()
			return nil, fmt.Errorf("agent %d of %d: %w", i, o.N, err)
		}
	}
	return c, nil
}

func agentName(i int) string { return fmt.Sprintf("node%04d", i) }

// syntheticState is what a real agent gossips about a typical compute
// node (the probes are at the boundary: their heartbeats and row are made
// up, with real sizes). Its network row is not in it (syntheticRow): rows
// go to the servers, not through gossip.
func syntheticState(i int) gossip.NodeState {
	s := gossip.NodeState{
		Name:     agentName(i),
		RaftPort: 7947, HTTPPort: 7948, ProbePort: 7949,
		Static: gossip.Static{
			Hostname: fmt.Sprintf("cn%04d.cluster.example.org", i), CPUModel: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
			Cores: 40, Threads: 80, MHz: 2100, MemTotal: 192 << 30, Switch: fmt.Sprintf("sw%02d", i/40),
			PEs:      []gossip.PE{{Kind: "gpu", Model: "NVIDIA A100-SXM4-40GB", Count: 4, MemBytes: 40 << 30}},
			Confined: true,
		},
		Dyn: gossip.Dynamic{
			Load: gossip.Means{Now: 12.5, M1: 11.93, M5: 10.25, M15: 9.81}, CPUUtil: gossip.Means{Now: 0.31, M1: 0.297, M5: 0.264, M15: 0.255},
			MemAvail: gossip.Means{Now: 1.53e11, M1: 1.529e11, M5: 1.531e11, M15: 1.532e11}, NetFlow: gossip.Means{Now: 1.2e7, M1: 1.13e7, M5: 9.8e6, M15: 8.7e6},
			Users: 3, SampledAt: 1795000000000 + int64(i),
		},
		Probes: []gossip.ProbeBeat{
			{Kind: "bandwidth", State: "running", PID: 40000 + i, Beat: 1795000000000},
			{Kind: "latency", State: "running", PID: 40001 + i, Beat: 1795000000000},
		},
		Raft: gossip.RaftInfo{Member: true},
	}
	return s
}

// syntheticRow is node i's network row of peers cells (every node but
// its owner), as its probes fill it and send it to the servers.
func syntheticRow(i, peers int) gossip.NetRow {
	r := gossip.NetRow{Node: agentName(i), V: 1}
	for p := range peers {
		if p == i {
			p = peers // a row has every node but its owner
		}
		r.Cells = append(r.Cells, gossip.NetEntry{
			Peer: agentName(p), RTT1: 87, RTT5: 91, BW: 9412.3, Peak: 9561.7,
			BWAt: 1795000000000 + int64(p), RTTAt: 1795000000000 + int64(p),
		})
	}
	return r
}

// waitConverged waits until every agent sees (99 % of) every agent alive (memberlist's
// membership, whose small alive messages pack many to a packet). Holding
// every node's state takes longer: a state that only one round of
// broadcasts carried may wait for push/pull, minutes at a thousand nodes
// (docs/scale.md); the timed changes do not depend on it.
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
			return fmt.Errorf("after %v agent %d of %d sees %d alive", timeout, i, len(c.agents), c.agents[i].NumAlive())
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
	return nil
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
	g.Update(func(s *gossip.NodeState) { s.Dyn.Users = users })
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
			c.agents[i].Update(func(s *gossip.NodeState) { s.Dyn.Load.Now, s.Dyn.SampledAt = load, s.Dyn.SampledAt+1 })
		}
	}()
	return &wg
}

// shutdown stops every agent, giving up on any that hangs: MockNetwork's
// sends block on a stopped agent, so a clean stop of a thousand is not
// guaranteed and a benchmark must not wait on it.
func (c *scaleCluster) shutdown() {
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
	r := scaleResult{N: o.N}
	// The row-table heap is measured first, while the heap is quiet: a
	// running cluster's garbage (push/pull buffers) swamps it.
	var err error
	if r.PushPull, r.PushPullRows, r.RowsPerAgent, err = pushPullSizes(o.N); err != nil {
		return r, err
	}
	before := heapAlloc()
	t0 := time.Now()
	c, err := startScaleCluster(ctx, o)
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
	if err := c.waitConverged(90*time.Second + time.Duration(o.N)*300*time.Millisecond); err != nil {
		return r, err
	}
	r.JoinSeconds = time.Since(t0).Seconds()
	r.HeapPerAgent = heapDelta(before, o.N)

	// Bytes over a steady window, with the background changes running.
	sent0, w0 := c.sent.Load(), time.Now()
	select {
	case <-time.After(o.Window):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	r.BytesPerNode = float64(c.sent.Load()-sent0) / float64(o.N) / time.Since(w0).Seconds()

	rng := rand.New(rand.NewPCG(o.Seed, 3))
	var ds []time.Duration
	for k := range o.Rounds {
		d, err := c.convergence(rng.IntN(o.N), 1000+k, 30*time.Second)
		if err != nil {
			return r, err
		}
		ds = append(ds, d)
	}
	r.ConvP50ms = float64(median(ds)) / float64(time.Millisecond)
	r.ConvP90ms = float64(pct(ds, 0.9)) / float64(time.Millisecond)
	r.ConvMaxms = float64(pct(ds, 1)) / float64(time.Millisecond)
	r.MinAlive = c.minAlive()

	one := syntheticState(0)
	b, err := gossip.EncodeState(&one)
	if err != nil {
		return r, err
	}
	r.StateBytes = len(b)
	return r, nil
}

// pushPullSizes encodes the push/pull payload of an n-node cluster (what
// gossip's LocalState sends: every live node's state, no rows), the same
// payload as it was while states carried every node's full network row
// (before issue 16 item 2: the "with rows" column), and measures the
// heap a server's row table (agent/rows) needs for n full rows. Rows are
// not in the live run: n full rows are n² cells.
func pushPullSizes(n int) (plain, withRows int, rowHeap float64, err error) {
	ss := make([]gossip.NodeState, n)
	for i := range ss {
		ss[i] = syntheticState(i)
	}
	b, err := gossip.EncodeStates(ss)
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
	gossip.NodeState
	Net  []gossip.NetEntry `json:"net,omitempty"`
	NetV uint64            `json:"nv,omitempty"`
}
