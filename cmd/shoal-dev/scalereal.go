package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster/twins"
	"github.com/shoal-hpc/shoal/tlsca"
)

// The real mode of bench-scale (-real): n whole agents (agent.Agent, as
// `shoal agent` runs it) in one process, their gossip and raft on the
// in-memory twins (package twins) instead of sockets, TLS and boltdb, and
// everything above the twins the agent's own code: memberlist and shoal's
// gossip, raft's role assignment and autopilot (3 voters and the non-voter
// servers the agent's Servers asks for), the clients' replication over
// HTTPS on loopback, the leader core placing jobs submitted through the
// API, and each node's job reconciler. What one process on two cores
// cannot hold for a thousand nodes is slowed or turned off through the
// agent's own configuration (realConfig), never by changing the agent.

// realRaftPort is node 0's raft port; node i's is realRaftPort+i. No port
// is bound: it names the node's raft twin, and lies below the kernel's
// ephemeral range the HTTP and probe ports come from.
const realRaftPort = 20000

// realQuiet is the period of the agent's own state republishing (samples,
// probe beats) in a run with -update 0: longer than any run, so that, as
// in the re-wired harness, no agent changes its state in the background.
const realQuiet = 24 * time.Hour

// realCluster is n agents on one twins network. Its scaleCluster holds
// each agent's gossip (in agent order) with the counters and pacing the
// re-wired harness uses, so joins, the quiet wait and the timed changes
// are measured the same way in both modes.
type realCluster struct {
	*scaleCluster
	net *twins.Network
	// nodes are the agents, node i named agentName(i).
	nodes []*agent.Agent
	raft  []*countingBackend
	dir   string
	token string
	owner string

	clientsMu sync.Mutex
	clients   map[int]*api.Client
}

// countingGossip is a node's gossip twin with every byte it sends
// counted, as countingTransport counts the MockNetwork's: packets as
// written, streams both ways on the dialling side.
type countingGossip struct {
	memberlist.NodeAwareTransport
	c *scaleCluster
}

func (t *countingGossip) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

func (t *countingGossip) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.c.sent.Add(int64(len(b)))
	t.c.packetBytes.Add(int64(len(b)))
	if len(b) >= bigPacket {
		t.c.bigPackets.Add(1)
	}
	return t.NodeAwareTransport.WriteToAddress(b, a)
}

func (t *countingGossip) DialTimeout(addr string, d time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, d)
}

func (t *countingGossip) DialAddressTimeout(a memberlist.Address, d time.Duration) (net.Conn, error) {
	conn, err := t.NodeAwareTransport.DialAddressTimeout(a, d)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, n: &t.c.sent}, nil
}

// countingBackend is a node's raft twin with the RPCs its raft sends
// counted (countingRaftTransport), whenever the agent makes it a server.
type countingBackend struct {
	raftnode.Backend
	rpcs, direct atomic.Int64
	peers        sync.Map
}

func (b *countingBackend) Open(cfg raftnode.Config, log hclog.Logger) (raftnode.Parts, error) {
	p, err := b.Backend.Open(cfg, log)
	if err != nil {
		return p, err
	}
	t, ok := p.Transport.(*raft.InmemTransport)
	if !ok {
		return p, fmt.Errorf("raft twin gave a %T, not raft's InmemTransport: its RPCs cannot be counted", p.Transport)
	}
	p.Transport = &countingRaftTransport{InmemTransport: t, rpcs: &b.rpcs, direct: &b.direct, peers: &b.peers}
	return p, nil
}

// realSampler is an idle compute node's reading: no load, so every node
// offers all its slots to the jobs, whatever this machine is doing.
type realSampler struct{}

func (realSampler) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), MemAvail: 150 << 30, Users: 3}, nil
}

// realConfig is node i's configuration: the agent's defaults, on the
// twins, with what cannot scale in one process slowed or off (each says
// why; docs/design/scale.md has the list).
func realConfig(o scaleOpts, i int, dir, token string) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.Name = agentName(i)
	cfg.BindAddr = "127.0.0.1"
	cfg.GossipPort, cfg.HTTPPort = 0, 0
	cfg.RaftPort = realRaftPort + i
	cfg.DataDir = filepath.Join(dir, cfg.Name)
	// n local sockets would be n more listeners; the API is on loopback.
	cfg.Socket = agent.SocketOff
	cfg.Token = token
	cfg.Bin = o.Bin
	cfg.BootstrapExpect, cfg.Voters, cfg.Servers = min(3, o.Servers), min(3, o.Servers), o.Servers
	// The gossip settings the re-wired harness runs (scaleConfig and its
	// flags: coordinates republished once a day, the per-source stream
	// cap lifted, since every twin is on 127.0.0.1); the agent sets name,
	// addresses and the key derived from the token itself.
	cfg.Gossip = o.Config
	cfg.Gossip.Key = nil
	// Every API connection comes from 127.0.0.1 here: the clients'
	// replication streams to the 5 servers alone are n-5.
	cfg.HTTP.MaxConnsPerSource = cfg.HTTP.MaxConns
	// The raft timings the re-wired harness ran at (shoalRaftConfig), so
	// that the leader's RPC rate compares; the agent's defaults (250 ms,
	// 10 ms commit) send about four times as many.
	cfg.Raft = agent.RaftTimings{HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond,
		LeaderLeaseTimeout: 250 * time.Millisecond, CommitTimeout: 50 * time.Millisecond}
	// Sampling and probe heartbeats each republish the node's state: at
	// the defaults (3 s, 2 s) a thousand agents make over 800 state
	// changes a second, eight times wall 2 of docs/design/scale.md, and
	// every /proc read is this one machine's. The sampler is an idle
	// node's reading (realSampler), republished every -update (never,
	// with 0, as the re-wired harness's agents).
	period := realQuiet
	if o.Update > 0 {
		period = o.Update
	}
	cfg.SampleInterval = period
	cfg.Sampler = realSampler{}
	cfg.Probes.InProcess = true // 3 processes an agent otherwise
	cfg.Probes.Port = 0
	cfg.Probes.BeatInterval = period
	cfg.Probes.Supervise.StaleAfter = max(cfg.Probes.Supervise.StaleAfter, 3*period)
	// Bandwidth tests and link checks move megabytes over loopback on
	// the same two cores: off (a cycle a day, no link checks). The
	// latency probe runs at its defaults (16 peers a minute).
	cfg.Probes.BandwidthInterval = 24 * time.Hour
	cfg.Probes.LinkCheck.Interval = 0
	// Jobs are placed at once: no bandwidth tests, no network model to
	// wait for.
	cfg.PlacementModelWait = 0
	// n agents' cgroups on one machine's hierarchy: jobs run unconfined.
	cfg.NoCgroups = true
	// Fencing starts a guard process per agent (agent/fence), some 28 MiB
	// resident each: a thousand of them are more than this machine holds.
	// Off, attempts run unfenced; the lease renewals it would add go to the
	// leader only while a node holds an attempt.
	cfg.Fence.Lease = 0
	st := syntheticState(i)
	cfg.Static = &probe.Static{Static: st.Static}
	cfg.Switch = st.Static.Switch
	return cfg
}

// raiseNoFile lifts the soft limit on open files to the hard one: each
// agent holds its HTTPS and probe listeners and, on loopback, both ends
// of every connection between agents (a client's replication stream, its
// row sends).
func raiseNoFile() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("read the open-files limit: %w", err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return 0, fmt.Errorf("raise the open-files limit to %d: %w", l.Max, err)
		}
	}
	return l.Cur, nil
}

// startRealCluster starts o.N agents one by one, each joining a random
// agent already in, paced as startScaleCluster paces its joins.
func startRealCluster(ctx context.Context, o scaleOpts, started func(*realCluster)) (*realCluster, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SCALE_DEBUG") != "" {
		quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	token, err := agent.NewToken()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "shoal-bench-scale-")
	if err != nil {
		return nil, fmt.Errorf("data directories: %w", err)
	}
	owner := "root"
	if u, err := user.Current(); err == nil {
		owner = u.Username
	}
	c := &realCluster{scaleCluster: &scaleCluster{}, net: twins.NewNetwork(), dir: dir, token: token, owner: owner, clients: map[int]*api.Client{}}
	c.lag = newLagMeter()
	c.owed.rate = o.PaceRate
	if started != nil {
		started(c)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 1))
	for i := range o.N {
		c.pace(o)
		cfg := realConfig(o, i, dir, token)
		cfg.Logger = quiet
		cfg.Gossip.Transport = &countingGossip{NodeAwareTransport: c.net.Gossip(cfg.Name), c: c.scaleCluster}
		b := &countingBackend{Backend: c.net.Raft(cfg.Name)}
		cfg.RaftBackend = b
		if i > 0 {
			// The agent's own join loop (retry-join with backoff).
			cfg.Join = []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(c.nodes[rng.IntN(i)].GossipPort()))}
		}
		a, err := agent.New(cfg)
		if err == nil {
			if err = a.Start(ctx); err != nil {
				_ = a.Shutdown(agent.Abrupt)
			}
		}
		if err != nil {
			c.shutdown()
			return nil, fmt.Errorf("start agent %d of %d: %w", i, o.N, err)
		}
		c.agentsMu.Lock()
		c.nodes = append(c.nodes, a)
		c.raft = append(c.raft, b)
		c.scaleCluster.agents = append(c.scaleCluster.agents, a.Gossip())
		c.agentsMu.Unlock()
		if i > 0 {
			if err := c.waitJoined(a, 60*time.Second); err != nil {
				c.shutdown()
				return nil, fmt.Errorf("agent %d of %d: %w", i, o.N, err)
			}
			c.owed.add(int64(i)*int64(retransmitLimit(i+1)), &c.bigPackets)
		}
		c.joined.Add(1)
	}
	return c, nil
}

// waitJoined waits until a's join loop has joined it: it sees another
// agent alive.
func (c *realCluster) waitJoined(a *agent.Agent, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for a.Gossip().NumAlive() < 2 {
		if time.Now().After(deadline) {
			return fmt.Errorf("not joined after %v", timeout)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
	return nil
}

// client is an API client of agent i, as the CLI holding the token is.
func (c *realCluster) client(i int) *api.Client {
	c.clientsMu.Lock()
	defer c.clientsMu.Unlock()
	cl, ok := c.clients[i]
	if !ok {
		ca, err := tlsca.DeriveCA(c.token)
		if err != nil {
			panic(err) // a token always derives a CA
		}
		cl = api.NewTLSClient("https://127.0.0.1:"+strconv.Itoa(c.nodes[i].HTTPPort()), c.token, tlsca.ClientConfig(tlsca.Pool(ca.Cert), nil, ""))
		c.clients[i] = cl
	}
	return cl
}

// shutdown stops every agent at once, giving up on any still stopping
// after 10 s (the process ends soon after), and removes their data.
func (c *realCluster) shutdown() {
	if c.lag != nil {
		c.lag.stop()
	}
	c.agentsMu.Lock()
	nodes := c.nodes
	c.agentsMu.Unlock()
	var wg sync.WaitGroup
	for _, a := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Shutdown(agent.Abrupt) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	_ = os.RemoveAll(c.dir)
}

// leader is the index of the agent leading raft that every agent names
// as leader, or -1.
func (c *realCluster) leader() int {
	l := -1
	for i, a := range c.nodes {
		if a.IsLeader() {
			l = i
		}
	}
	if l < 0 {
		return -1
	}
	for _, a := range c.nodes {
		if a.LeaderName() != c.nodes[l].Name() {
			return -1
		}
	}
	return l
}

// raftLeader waits until a server leads raft in its own eyes and returns
// its index.
func (c *realCluster) raftLeader(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		for i, a := range c.nodes {
			if a.IsLeader() {
				return i, nil
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("no raft leader after %v", timeout)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

// servers counts the agents running raft.
func (c *realCluster) servers() int {
	k := 0
	for _, a := range c.nodes {
		if a.IsServer() {
			k++
		}
	}
	return k
}

// waitRaft waits until the agents' roles settle as the agent assigns them
// (want servers in raft, one leader every agent names) and every agent's
// copy of the state holds what the leader's held then: the clients
// follow a server's replication stream. It returns that leader's index.
func (c *realCluster) waitRaft(want int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		l := c.leader()
		if l >= 0 && c.servers() == want {
			idx := c.nodes[l].FSM().Index()
			behind := 0
			for _, a := range c.nodes {
				if a.FSM().Index() < idx {
					behind++
				}
			}
			if behind == 0 {
				return l, nil
			}
			if time.Now().After(deadline) {
				return -1, fmt.Errorf("after %v %d of %d agents' state is behind the leader's index %d", timeout, behind, len(c.nodes), idx)
			}
		} else if time.Now().After(deadline) {
			return -1, fmt.Errorf("after %v: leader index %d, %d servers of %d wanted", timeout, l, c.servers(), want)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
}

// seqs is the sum of the agents' own state versions: it grows by one at
// every change of a node's state, whichever of the agent's loops made it.
func (c *realCluster) seqs() uint64 {
	var n uint64
	for _, a := range c.nodes {
		n += a.Gossip().Self().Seq
	}
	return n
}

// sentRPCs is the RPCs every server's raft has sent.
func (c *realCluster) sentRPCs() int64 {
	var n int64
	for _, b := range c.raft {
		n += b.rpcs.Load()
	}
	return n
}

// term is the highest raft term any server holds.
func (c *realCluster) term() uint64 {
	var t uint64
	for _, a := range c.nodes {
		if r := a.Raft(); r != nil {
			v, _ := strconv.ParseUint(r.Stats()["term"], 10, 64)
			t = max(t, v)
		}
	}
	return t
}

// leaderRPCRate is raftCluster.leaderRPCRate on the agents' own raft.
func (c *realCluster) leaderRPCRate(window time.Duration, during func()) (float64, uint64) {
	n0, term0, t0 := c.sentRPCs(), c.term(), time.Now()
	end := time.After(window)
	if during != nil {
		during()
	}
	<-end
	return float64(c.sentRPCs()-n0) / time.Since(t0).Seconds(), c.term() - term0
}

// rpcPeers is the most distinct servers any server sent RPCs to.
func (c *realCluster) rpcPeers() int {
	most := 0
	for _, b := range c.raft {
		k := 0
		b.peers.Range(func(any, any) bool { k++; return true })
		most = max(most, k)
	}
	return most
}

// Index is the agent named name, or -1.
func (c *realCluster) Index(name string) int {
	for i, a := range c.nodes {
		if a.Name() == name {
			return i
		}
	}
	return -1
}
