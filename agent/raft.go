package agent

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/raftnode"
)

// server is this agent's raft, once it is a server: raft with its
// transport and stores (agent/raftnode) and the autopilot its leader runs
// (autopilot.go).
type server struct {
	node  *raftnode.Node
	raft  *raft.Raft
	pilot *pilot
}

// serverRef holds the agent's server parts: nil on a client. An agent
// becomes a server once (at start with raft state on disk, at bootstrap,
// or when the leader wants it) and stays one until it stops; the
// components that use raft (applier, HTTP backend) read it at each use.
type serverRef struct{ p atomic.Pointer[server] }

func (r *serverRef) load() *server { return r.p.Load() }

// raft is the raft instance, nil on a client.
func (r *serverRef) raft() *raft.Raft {
	if s := r.p.Load(); s != nil {
		return s.raft
	}
	return nil
}

// raftDir is where the agent's raft log, stable store and snapshots live;
// a client never creates it.
func (a *Agent) raftDir() string { return filepath.Join(a.cfg.DataDir, "raft") }

// raftBackend is the transport and stores raft runs on: the configured
// one, or TLS on the raft listener and boltdb under raftDir.
func (a *Agent) raftBackend() raftnode.Backend {
	if a.cfg.RaftBackend != nil {
		return a.cfg.RaftBackend
	}
	return raftnode.Disk{Dir: a.raftDir()}
}

// closeRaftListener closes the raft port, bound unless a raft backend of
// the agent's own needs none.
func (a *Agent) closeRaftListener() {
	if a.raftLn != nil {
		a.raftLn.Close()
	}
}

// startServer starts this node's raft (agent/raftnode) over the raft
// listener, with the agent's TLS trust and certificate, and its leader
// loop. floor is the index the FSM already holds (a client becoming a
// server keeps the state it followed). It runs under roleMu and refuses
// once the agent stops, so Shutdown never misses a raft started late.
func (a *Agent) startServer(floor uint64) (*server, error) {
	a.roleMu.Lock()
	defer a.roleMu.Unlock()
	if s := a.srv.load(); s != nil {
		return s, nil
	}
	if a.loops.ctx.Err() != nil {
		return nil, fmt.Errorf("start raft: %w", a.loops.ctx.Err())
	}
	t := a.cfg.Raft
	n, err := raftnode.Start(raftnode.Config{
		ID: a.cfg.Name, Backend: a.raftBackend(),
		Timings:  raftnode.Timings{HeartbeatTimeout: t.HeartbeatTimeout, ElectionTimeout: t.ElectionTimeout, LeaderLeaseTimeout: t.LeaderLeaseTimeout, CommitTimeout: t.CommitTimeout},
		Listener: a.raftLn, Advertise: &net.TCPAddr{IP: net.ParseIP(a.advertiseIP()), Port: a.RaftPort()},
		Roots: a.tls.roots, Leaf: a.tls.leaf,
		FSM: a.fsm, Wake: []chan struct{}{a.appliedLeader, a.appliedJobs, a.appliedEvents}, Logger: a.log,
		OnApply: a.feed.Applied, OnRestore: a.feed.Restored, Floor: floor,
	})
	if err != nil {
		return nil, err
	}
	s := &server{node: n, raft: n.Raft}
	s.pilot = newPilot(pilotDeps{raft: n.Raft, gossip: a.gossip, self: a.cfg.Name, voters: a.cfg.voters(),
		grace: a.cfg.DeadVoterGrace, heartbeat: t.HeartbeatTimeout, clock: a.clock, log: a.log})
	a.srv.p.Store(s)
	// The feed serves clients only while this server is current with its
	// leader (replica's health check) and can write its raft log: a server
	// that cannot hears its leader but takes no entries, and its clients
	// would follow it into the past (logfault.go).
	lag := max(5*time.Second, 3*t.HeartbeatTimeout)
	a.feed.SetHealth(func() error {
		if err := n.Fault(); err != nil {
			return err
		}
		return raftnode.Current(n.Raft, lag)
	})
	var observePlacement func(time.Duration)
	if m := a.metrics; m != nil {
		observePlacement = func(d time.Duration) { m.Placement.Observe(d.Seconds()) }
	}
	lead := &leading{log: a.log, raft: n.Raft, fsm: a.fsm, gossip: a.gossip, rows: a.rows.leaderRow, clock: a.clock,
		config: leaderConfig(a.cfg, a.elastic, &a.live), apply: a.applier.applyLocal, observePlacement: observePlacement,
		leaderCh: n.LeaderCh, applied: a.appliedLeader, hooks: slices.Clone(a.leaderHooks), pilot: s.pilot,
		name: a.cfg.Name, placements: a.placements, leases: &a.leases, led: &a.led}
	a.loops.run("leader", lead.loop)
	a.loops.run("leader-loss", func(ctx context.Context) {
		raftnode.WatchLeaderLoss(ctx, n.Raft, a.cfg.Name, t.HeartbeatTimeout, a.log)
	})
	a.log.Info("raft started: this agent is a server", "floor", floor)
	return s, nil
}
