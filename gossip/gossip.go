package gossip

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/internal/watch"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/vivaldi"
)

// Gossip runs memberlist and keeps the cluster's table of node states.
type Gossip struct {
	cfg Config
	log *slog.Logger
	// rejects counts and rate-limits the lines about gossip that failed to
	// decrypt (logwriter.go).
	rejects *rejects
	ml      *memberlist.Memberlist
	q       *memberlist.TransmitLimitedQueue
	// guard caps inbound streams before authentication; stateBytes is the
	// size of the table this node last sent, from which it derives the cap.
	guard      *streamGuard
	stateBytes atomic.Int64

	mu    sync.Mutex
	table *Table
	self  nodestate.NodeState

	// coord is this node's Vivaldi client, nil with coordinates off;
	// coordAt is when the coordinate was last published (under mu).
	coord        *coordinate.Client
	rttMin       *rttFilter
	coordAt      time.Time
	coordUpdates atomic.Uint64

	changed chan struct{}
	// index counts the changes notify announced, for readers that block
	// on the table (Index).
	index watch.Index
	stop  chan struct{}
	done  sync.WaitGroup
	now   func() time.Time

	// afterMembers, set by a test only, runs in Nodes between reading
	// memberlist's members and taking mu: the window a death notice can
	// fall into.
	afterMembers atomic.Pointer[func()]
}

// Meta is what a node puts in memberlist's node metadata: only what is needed
// to reach it, because metadata is capped at 512 bytes.
type Meta struct {
	Boot     int64 `json:"b"`
	RaftPort int   `json:"r"`
	HTTPPort int   `json:"h"`
}

// New starts memberlist for one node with its first state. The state's Name,
// Addr and GossipPort are filled in from the config and the bound port.
func New(cfg Config, initial nodestate.NodeState) (*Gossip, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	g := &Gossip{
		cfg: cfg, log: logger, table: NewTable(cfg.Name),
		changed: make(chan struct{}, 1), stop: make(chan struct{}), now: time.Now,
	}
	mc := memberlist.DefaultLANConfig()
	mc.Name = cfg.Name
	mc.BindAddr = cfg.BindAddr
	mc.BindPort = cfg.Port
	mc.AdvertiseAddr = cfg.AdvertiseAddr
	mc.AdvertisePort = cfg.Port
	mc.ProbeInterval = cfg.ProbeInterval
	mc.ProbeTimeout = cfg.ProbeTimeout
	mc.GossipInterval = cfg.GossipInterval
	mc.GossipNodes = cfg.GossipNodes
	mc.SuspicionMult = cfg.SuspicionMult
	mc.PushPullInterval = cfg.PushPullInterval
	mc.SecretKey = cfg.Key
	mc.EnableCompression = cfg.Compression
	mc.Delegate = (*delegate)(g)
	mc.Events = (*events)(g)
	g.rejects = newRejects(logger)
	mc.Logger = log.New(logWriter{l: logger, rej: g.rejects}, "", 0)
	if cfg.Coordinates {
		cc, err := newCoordClient()
		if err != nil {
			return nil, fmt.Errorf("start network coordinates: %w", err)
		}
		g.coord, g.rttMin = cc, newRTTFilter(cfg.CoordinateMinOf)
		mc.Ping = (*pinger)(g)
	}
	g.q = &memberlist.TransmitLimitedQueue{NumNodes: g.numNodes, RetransmitMult: mc.RetransmitMult}

	g.self = initial.Clone()
	g.self.Name = cfg.Name
	if g.self.Boot == 0 {
		g.self.Boot = time.Now().UnixNano()
	}
	g.self.Seq = 1
	g.self.Published = g.now().UnixMilli()
	g.table.Merge(g.self, false)
	g.table.SetStatus(cfg.Name, nodestate.StatusAlive, g.now())

	var nt memberlist.NodeAwareTransport = cfg.Transport
	if nt == nil {
		var err error
		if nt, err = listenTransport(mc); err != nil {
			return nil, fmt.Errorf("start gossip on %s:%d: %w", cfg.BindAddr, cfg.Port, err)
		}
	}
	g.guard = newStreamGuard(nt, newStreamSlots(cfg.MaxInboundStreams, cfg.MaxStreamsPerSource, cfg.MaxPendingStreamBytes), g.streamCap, logger)
	mc.Transport = g.guard
	ml, err := memberlist.Create(mc)
	if err != nil {
		_ = g.guard.Shutdown()
		return nil, fmt.Errorf("start gossip on %s:%d: %w", cfg.BindAddr, cfg.Port, err)
	}
	g.mu.Lock()
	g.ml = ml
	g.mu.Unlock()
	ln := ml.LocalNode()
	g.mu.Lock()
	g.self.Addr, g.self.GossipPort = ln.Addr.String(), int(ln.Port)
	g.self.Seq++
	g.self.Published = g.now().UnixMilli()
	g.table.Merge(g.self, false)
	g.mu.Unlock()
	if err := ml.UpdateNode(time.Second); err != nil {
		g.log.Warn("publish node metadata", "err", err)
	}
	self := g.Self()
	g.broadcast(&self)
	g.done.Add(2)
	go g.reaper()
	go g.reconnectLoop()
	if g.coord != nil {
		g.done.Add(1)
		go g.coordLoop()
	}
	return g, nil
}

// LocalAddr returns the address and port other nodes use for gossip.
func (g *Gossip) LocalAddr() (string, int) {
	ln := g.ml.LocalNode()
	return ln.Addr.String(), int(ln.Port)
}

// Join contacts the given addresses ("host" or "host:port"; the default port
// is this node's gossip port) until at least one answers, backing off between
// rounds, or until ctx ends. Each failed round is logged with its reason.
func (g *Gossip) Join(ctx context.Context, addrs []string) error {
	if len(addrs) == 0 {
		return nil
	}
	_, port := g.LocalAddr()
	full := make([]string, len(addrs))
	for i, a := range addrs {
		full[i] = withDefaultPort(a, port)
	}
	backoff := 250 * time.Millisecond
	for {
		n, err := g.ml.Join(full)
		if n > 0 {
			g.log.Info("joined cluster", "contacted", n, "members", g.ml.NumMembers())
			// Announce ourselves to everybody now rather than at the next
			// push/pull, which may be tens of seconds away.
			self := g.Self()
			g.broadcast(&self)
			return nil
		}
		g.log.Warn("join failed, will retry", "addrs", full, "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v): last error: %w", ErrJoinStopped, full, err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

func withDefaultPort(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(port))
}

// Update changes this node's state and spreads it. fn must not keep s.
func (g *Gossip) Update(fn func(s *nodestate.NodeState)) {
	g.mu.Lock()
	s := g.self.Clone()
	fn(&s)
	// Identity is not the caller's to change.
	s.Name, s.Boot, s.Addr, s.GossipPort, s.Leaving = g.self.Name, g.self.Boot, g.self.Addr, g.self.GossipPort, g.self.Leaving || s.Leaving
	s.Seq = g.self.Seq + 1
	s.Published = g.now().UnixMilli()
	// The coordinate is gossip's own: every update carries the latest.
	s.Coord = nil
	if g.coord != nil {
		s.Coord, g.coordAt = vivaldi.FromSerf(g.coord.GetCoordinate()), g.now()
	}
	g.self = s
	g.table.Merge(s, false)
	g.mu.Unlock()
	g.broadcast(&s)
	g.notify()
}

// Self returns a copy of this node's current state.
func (g *Gossip) Self() nodestate.NodeState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.self.Clone()
}

// Nodes returns every known node with its liveness, sorted by name.
//
// The slice and the entries in it are the caller's: it may sort, filter or
// append to the slice and set any field of an entry, State's included
// (e.State.Dyn = d, e.State.Raft.Proposal = p). What those fields point
// at is shared with the table and with every other reader, without a
// lock: the elements of State's slices (Static.PEs, Static.Features,
// Probes, Raft.Proposal, Raft.Want, Coord.Vec), *State.Coord,
// *State.Link and Traffic must not be written, sorted or appended to in
// place. A caller that needs to change one of them copies it first
// (slices.Clone, or NodeState.Clone for the whole state). Copying the
// states on every read instead cost over half of an agent's CPU at 300
// in-process agents: the agent's loops read the table several times a
// second.
func (g *Gossip) Nodes() []nodestate.Entry {
	var out []nodestate.Entry
	g.readTable(func() { out = g.table.Entries() })
	return out
}

// readTable brings the table's liveness up to memberlist's member list and
// runs read under g.mu.
func (g *Gossip) readTable(read func()) {
	members := g.ml.Members()
	if f := g.afterMembers.Load(); f != nil {
		(*f)()
	}
	g.mu.Lock()
	moved := g.seenMembers(members)
	read()
	g.mu.Unlock()
	if moved {
		// A suspicion starts or ends only in memberlist's member list,
		// which sends no event: readers of Index learn of it here.
		g.notify()
	}
}

// seenMembers brings the table's liveness up to a snapshot of memberlist's
// members read before g.mu was taken (it holds g.mu), and says whether a
// status changed.
func (g *Gossip) seenMembers(members []*memberlist.Node) (moved bool) {
	now := g.now()
	for _, m := range members {
		if m.Name == g.cfg.Name {
			continue
		}
		// Members was read before g.mu: SeenLive lets a death notice
		// that came in between stand.
		st := nodestate.StatusAlive
		if m.State == memberlist.StateSuspect {
			st = nodestate.StatusSuspect
		} else if m.State != memberlist.StateAlive {
			continue
		}
		before, known := g.table.rows[m.Name]
		was := nodestate.StatusAlive
		if known {
			was = before.Status
		}
		if g.table.SeenLive(m.Name, st, now) {
			g.log.Debug("a members snapshot older than a death notice: the node stays dead", "node", m.Name)
		} else if !known || was != st {
			moved = true
		}
	}
	return moved
}

// MemberMeta returns the metadata of every member memberlist currently knows
// as alive or suspect, keyed by name, with their gossip addresses.
func (g *Gossip) MemberMeta() map[string]MemberInfo {
	out := make(map[string]MemberInfo)
	for _, m := range g.ml.Members() {
		var meta Meta
		_ = json.Unmarshal(m.Meta, &meta) // a peer without metadata yet has zero ports
		out[m.Name] = MemberInfo{Name: m.Name, Addr: m.Addr.String(), Port: int(m.Port), Meta: meta}
	}
	return out
}

// MemberInfo is a live member's address and metadata.
type MemberInfo struct {
	Name string
	Addr string
	Port int
	Meta Meta
}

// NumAlive is the number of alive members, this node included.
func (g *Gossip) NumAlive() int { return g.ml.NumMembers() }

// Changed is signalled (coalesced, never blocking the sender) whenever the
// table or the membership changes. Reconcilers use it as a wake-up and then
// read the whole state: level-triggered, so a missed signal loses nothing.
func (g *Gossip) Changed() <-chan struct{} { return g.changed }

// Index counts the changes of the table and the membership (each one
// that Changed signals), with a channel closed at the next: the index of
// the observed state that blocking reads of nodes wait on. It starts at 0
// with every agent and means nothing on another agent.
func (g *Gossip) Index() (uint64, <-chan struct{}) { return g.index.Get() }

// WaitIndex returns the change count once it is above after, or when ctx
// ends (watch.Index.Wait).
func (g *Gossip) WaitIndex(ctx context.Context, after uint64) uint64 {
	return g.index.Wait(ctx, after)
}

// Leave announces a graceful departure and waits up to timeout for it to
// spread.
func (g *Gossip) Leave(timeout time.Duration) error {
	g.Update(func(s *nodestate.NodeState) { s.Leaving = true })
	g.mu.Lock()
	g.table.SetStatus(g.cfg.Name, nodestate.StatusLeft, g.now())
	g.mu.Unlock()
	if err := g.ml.Leave(timeout); err != nil {
		return fmt.Errorf("leave gossip: %w", err)
	}
	return nil
}

// Shutdown stops memberlist without telling anybody: peers will see this
// node as dead. Call Leave first for a graceful stop.
func (g *Gossip) Shutdown() error {
	select {
	case <-g.stop:
		return nil
	default:
		close(g.stop)
	}
	g.done.Wait()
	if err := g.ml.Shutdown(); err != nil {
		return fmt.Errorf("shut down gossip: %w", err)
	}
	return nil
}

func (g *Gossip) numNodes() int { return g.ml.NumMembers() }

func (g *Gossip) broadcast(s *nodestate.NodeState) {
	b, err := nodestate.EncodeState(s)
	if err != nil {
		g.log.Error("encode own state", "err", err)
		return
	}
	g.q.QueueBroadcast(&stateBroadcast{name: s.Name, msg: b})
}

func (g *Gossip) notify() {
	g.index.Bump()
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

func (g *Gossip) reaper() {
	defer g.done.Done()
	t := time.NewTicker(reapTick(g.cfg.ReapAfter))
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.mu.Lock()
			gone := g.table.Reap(g.now(), g.cfg.ReapAfter)
			g.mu.Unlock()
			if len(gone) > 0 {
				g.log.Info("reaped departed nodes", "nodes", gone)
				g.notify()
			}
		}
	}
}

func reapTick(after time.Duration) time.Duration {
	return max(min(after/4, 30*time.Second), 10*time.Millisecond)
}

var _ io.Writer = logWriter{}

// Lookup returns one node's entry as the table holds it, without reading
// memberlist's member list: cheap enough to poll for one node across a
// thousand in-process agents (shoal-dev bench-scale). The entry shares its
// state's slices and pointers with the table, as Nodes' do.
func (g *Gossip) Lookup(name string) (nodestate.Entry, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.table.Get(name)
}

// Node returns one node's entry, with its liveness as Nodes reads it. The
// entry shares its state's slices and pointers with the table: Nodes says
// what the caller may change.
func (g *Gossip) Node(name string) (e nodestate.Entry, ok bool) {
	g.readTable(func() { e, ok = g.table.Get(name) })
	return e, ok
}
