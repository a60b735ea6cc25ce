package main

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// The raft part of bench-scale: real hashicorp/raft among the servers,
// over raft's own InmemTransport. That transport is part of raft (its
// tests and MakeCluster use it), moves the same RPC structs the TLS stream
// layer moves, and costs no sockets or TLS handshakes on a two-core
// machine already running a thousand memberlists: the figure measured, how
// many RPCs the leader sends, does not depend on how the bytes travel
// (raft decides when to heartbeat and replicate, not the transport).

// countingTransport is raft's in-memory transport with every RPC this
// server sends counted: heartbeats and replication (AppendEntries, also
// through the pipeline), votes, snapshots and leadership transfers.
//
// raft sends two streams to each follower when idle: heartbeats
// (AppendEntries without entries, every HeartbeatTimeout/10 to /5) and,
// on the replication pipeline, an append every CommitTimeout to /2 that
// carries the commit index. direct counts the first kind (and the
// non-pipelined appends), rpcs every RPC.
type countingRaftTransport struct {
	*raft.InmemTransport
	rpcs, direct *atomic.Int64
	// peers is every server this one sent an RPC to.
	peers *sync.Map
}

func (t *countingRaftTransport) count(target raft.ServerAddress) {
	t.rpcs.Add(1)
	t.peers.Store(target, true)
}

var (
	_ raft.Transport   = (*countingRaftTransport)(nil)
	_ raft.WithPreVote = (*countingRaftTransport)(nil)
	_ raft.WithClose   = (*countingRaftTransport)(nil)
)

func (t *countingRaftTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.InmemTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	t.peers.Store(target, true)
	return &countingPipeline{AppendPipeline: p, rpcs: t.rpcs}, nil
}

func (t *countingRaftTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	t.count(target)
	t.direct.Add(1)
	return t.InmemTransport.AppendEntries(id, target, args, resp)
}

func (t *countingRaftTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	t.count(target)
	return t.InmemTransport.RequestVote(id, target, args, resp)
}

func (t *countingRaftTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	t.count(target)
	return t.InmemTransport.RequestPreVote(id, target, args, resp)
}

func (t *countingRaftTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	t.count(target)
	return t.InmemTransport.InstallSnapshot(id, target, args, resp, data)
}

func (t *countingRaftTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	t.count(target)
	return t.InmemTransport.TimeoutNow(id, target, args, resp)
}

type countingPipeline struct {
	raft.AppendPipeline
	rpcs *atomic.Int64
}

func (p *countingPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	p.rpcs.Add(1)
	return p.AppendPipeline.AppendEntries(args, resp)
}

// hookedFSM is a server's raftfsm.FSM with the calls an agent's
// notifyingFSM makes after each entry (agent/raftnode/applied.go): the
// replication feed's Applied and Restored, and the wake of the node's
// reconciler (here: the observer of attempts).
type hookedFSM struct {
	*raftfsm.FSM
	applied  func(index, term uint64, data []byte)
	restored func(index uint64)
	wake     chan struct{}
}

var _ raft.FSM = (*hookedFSM)(nil)

func (f *hookedFSM) Apply(l *raft.Log) interface{} {
	r := f.FSM.Apply(l)
	if f.applied != nil && l.Type == raft.LogCommand {
		f.applied(l.Index, l.Term, l.Data)
	}
	signal(f.wake)
	return r
}

func (f *hookedFSM) Restore(rc io.ReadCloser) error {
	if err := f.FSM.Restore(rc); err != nil {
		return err
	}
	if f.restored != nil {
		f.restored(f.FSM.Index())
	}
	signal(f.wake)
	return nil
}

func signal(ch chan struct{}) {
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// raftServer is one raft member of the harness.
type raftServer struct {
	name   string
	raft   *raft.Raft
	fsm    *hookedFSM
	rpcs   atomic.Int64 // RPCs this server sent
	direct atomic.Int64 // of which AppendEntries outside the pipeline (heartbeats)
	peers  sync.Map     // raft.ServerAddress -> true: every server it sent to
}

// raftCluster is S raft servers on raft's in-memory transport: the first
// `voters` vote, the rest are non-voters (warm standbys), as the agents'
// server set, or every node as in the all-members layout.
type raftCluster struct {
	servers []*raftServer
}

// shoalRaftConfig is raft's configuration as agent/raftnode sets it, with
// the timings docs/design/scale.md's figures were measured at (500 ms
// heartbeat and election, 250 ms lease, 50 ms commit timeout; the agent's
// defaults are now 250 ms and 10 ms, agent.DefaultConfig().Raft, which
// doubles the heartbeats and quintuples the commit appends): to each
// follower a heartbeat every 50-100 ms (HeartbeatTimeout/10, jittered)
// and a commit-index append every 50-100 ms (CommitTimeout, jittered).
// Kept, so that runs compare with those figures, and because one process
// holding a thousand agents starves raft's timers as it does gossip's.
func shoalRaftConfig(name string) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(name)
	rc.HeartbeatTimeout = 500 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = 250 * time.Millisecond
	rc.CommitTimeout = 50 * time.Millisecond
	rc.SnapshotThreshold = 2048
	rc.TrailingLogs = 4096
	rc.Logger = hclog.NewNullLogger()
	return rc
}

// startRaftCluster starts one raft server per name, the first bootstrapping
// the whole configuration. hooks, when set, gives each server's FSM its
// feed hooks and wake channel (nil fields are left out).
func startRaftCluster(names []string, voters int, hooks func(i int, f *hookedFSM)) (*raftCluster, error) {
	c := &raftCluster{}
	trans := make([]*raft.InmemTransport, len(names))
	var conf raft.Configuration
	for i, name := range names {
		_, trans[i] = raft.NewInmemTransportWithTimeout(raft.ServerAddress(name), 10*time.Second)
		suffrage := raft.Voter
		if i >= voters {
			suffrage = raft.Nonvoter
		}
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: suffrage, ID: raft.ServerID(name), Address: raft.ServerAddress(name)})
	}
	// Every transport knows every other before any raft sends.
	for i := range trans {
		for j := range trans {
			if i != j {
				trans[i].Connect(raft.ServerAddress(names[j]), trans[j])
			}
		}
	}
	for i, name := range names {
		s := &raftServer{name: name, fsm: &hookedFSM{FSM: raftfsm.New()}}
		if hooks != nil {
			hooks(i, s.fsm)
		}
		t := &countingRaftTransport{InmemTransport: trans[i], rpcs: &s.rpcs, direct: &s.direct, peers: &s.peers}
		r, err := raft.NewRaft(shoalRaftConfig(name), s.fsm, raft.NewInmemStore(), raft.NewInmemStore(), raft.NewInmemSnapshotStore(), t)
		if err != nil {
			c.shutdown()
			return nil, fmt.Errorf("start raft server %s: %w", name, err)
		}
		s.raft = r
		c.servers = append(c.servers, s)
		if i == 0 {
			if err := r.BootstrapCluster(conf).Error(); err != nil {
				c.shutdown()
				return nil, fmt.Errorf("bootstrap raft on %s: %w", name, err)
			}
		}
	}
	return c, nil
}

// leader returns the index of the server leading, or -1.
func (c *raftCluster) leader() int {
	for i, s := range c.servers {
		if s.raft.State() == raft.Leader {
			return i
		}
	}
	return -1
}

// waitReady waits until one server leads and every other has heard from
// it within the last second: the leader heartbeats all of them.
func (c *raftCluster) waitReady(timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		l := c.leader()
		if l >= 0 && c.servers[l].raft.Barrier(timeout).Error() == nil {
			ready := true
			for i, s := range c.servers {
				if i != l && time.Since(s.raft.LastContact()) > time.Second {
					ready = false
				}
			}
			if ready {
				return l, nil
			}
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("raft among %d servers: no leader in contact with every server after %v (leader index %d)", len(c.servers), timeout, l)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
}

// sentRPCs is the RPCs every server has sent: the leader's, and the
// votes of any election (a follower sends nothing else).
func (c *raftCluster) sentRPCs() int64 {
	var n int64
	for _, s := range c.servers {
		n += s.rpcs.Load()
	}
	return n
}

// term is the highest raft term any server holds: it grows by one or more
// at every election.
func (c *raftCluster) term() uint64 {
	var t uint64
	for _, s := range c.servers {
		v, _ := strconv.ParseUint(s.raft.Stats()["term"], 10, 64)
		t = max(t, v)
	}
	return t
}

// leaderRPCRate counts the RPCs the servers send while during runs and
// at least window has passed, and returns them per second, with the
// elections held meanwhile (terms begun). Followers send RPCs only to
// elect, so with no election the figure is the leader's alone; counting
// every server keeps it whole when a loaded machine delays a heartbeat
// past the lease and leadership moves.
func (c *raftCluster) leaderRPCRate(window time.Duration, during func()) (float64, uint64, error) {
	if _, err := c.waitReady(60 * time.Second); err != nil {
		return 0, 0, err
	}
	n0, term0, t0 := c.sentRPCs(), c.term(), time.Now()
	end := time.After(window)
	if during != nil {
		during()
	}
	<-end
	return float64(c.sentRPCs()-n0) / time.Since(t0).Seconds(), c.term() - term0, nil
}

// rpcPeers counts the distinct servers the servers sent RPCs to, the
// most any one server did: the leader's followers, whatever the number of
// clients.
func (c *raftCluster) rpcPeers() int {
	most := 0
	for _, s := range c.servers {
		k := 0
		s.peers.Range(func(any, any) bool { k++; return true })
		most = max(most, k)
	}
	return most
}

func (c *raftCluster) isServer(name string) bool {
	for _, s := range c.servers {
		if s.name == name {
			return true
		}
	}
	return false
}

// apply proposes one raftfsm command on the leader and returns the FSM's
// answer.
func (c *raftCluster) apply(typ string, body any) (raftfsm.Result, error) {
	l, err := c.waitReady(30 * time.Second)
	if err != nil {
		return raftfsm.Result{}, fmt.Errorf("propose %s: %w", typ, err)
	}
	b, err := raftfsm.Encode(typ, time.Now(), body)
	if err != nil {
		return raftfsm.Result{}, err
	}
	f := c.servers[l].raft.Apply(b, 10*time.Second)
	if err := f.Error(); err != nil {
		return raftfsm.Result{}, fmt.Errorf("propose %s: %w", typ, err)
	}
	res, _ := f.Response().(raftfsm.Result)
	if res.Err != nil {
		return res, fmt.Errorf("propose %s: refused: %w", typ, res.Err)
	}
	return res, nil
}

func (c *raftCluster) shutdown() {
	for _, s := range c.servers {
		if s.raft != nil {
			_ = s.raft.Shutdown().Error()
		}
	}
}

// membersRPCRate measures today's all-members layout: m raft members (3
// voters, the rest non-voters, as the leader's membership rounds keep
// them), nothing else running, and returns the RPCs per second the leader
// sends over window once every member is in contact.
func membersRPCRate(m int, window time.Duration) (float64, error) {
	names := make([]string, m)
	for i := range names {
		names[i] = agentName(i)
	}
	c, err := startRaftCluster(names, min(3, m), nil)
	if err != nil {
		return 0, err
	}
	defer c.shutdown()
	if _, err := c.waitReady(60*time.Second + time.Duration(m)*time.Second); err != nil {
		return 0, err
	}
	rate, _, err := c.leaderRPCRate(window, nil)
	return rate, err
}
