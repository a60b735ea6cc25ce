package agent

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	autopilot "github.com/hashicorp/raft-autopilot"

	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/nodestate"
)

// This file runs hashicorp/raft-autopilot on the leader: it tracks the
// servers' health (gossip liveness and the raft standing each server
// gossips, see publishStanding), stabilises new servers, promotes and
// demotes with shoal's promoter (leader.PlanVoters), and removes dead
// servers after the grace (RemoveFailedServer) and stale ones (in raft,
// but gossiping themselves clients or unknown to gossip). It adds nobody
// by itself: the leader core adds the servers gossip reports
// (leader.Membership) through AddServer.

// pilotDeps are what the autopilot delegate reads.
type pilotDeps struct {
	raft   *raft.Raft
	gossip *gossip.Gossip
	self   string
	// voters is the voter target; grace how long a server may be dead
	// before autopilot removes it; heartbeat raft's heartbeat timeout,
	// which scales the health thresholds.
	voters    int
	grace     time.Duration
	heartbeat time.Duration
	// clock is the agent's: how long a server has been dead (gossip's
	// Since) and how long healthy are read against it.
	clock func() time.Time
	log   *slog.Logger
}

// pilot is one server's autopilot, run while it leads.
type pilot struct {
	pilotDeps
	ap *autopilot.Autopilot
}

var (
	_ autopilot.ApplicationIntegration = (*pilot)(nil)
	_ autopilot.Promoter               = promoter{}
)

// pilotInterval is how often autopilot refreshes its view of the servers
// and acts on it. A demotion waits for both (the view that shows the
// voter failed, then the round that acts), so each adds to how long a
// dead voter stays in the configuration; a round reads only gossip and
// raft's own state, no request per server, so a quarter second is cheap.
const pilotInterval = 250 * time.Millisecond

func newPilot(d pilotDeps) *pilot {
	p := &pilot{pilotDeps: d}
	p.ap = autopilot.New(d.raft, p, autopilot.WithLogger(raftnode.HCLog(d.log, "autopilot")),
		autopilot.WithPromoter(promoter{clock: d.clock}), autopilot.WithReconcileInterval(pilotInterval), autopilot.WithUpdateInterval(pilotInterval))
	return p
}

// run runs autopilot until ctx ends (leadership lost, agent stopping).
func (p *pilot) run(ctx context.Context) {
	p.ap.Start(ctx)
	<-ctx.Done()
	<-p.ap.Stop()
}

// add adds a server as a non-voter (or updates its address), through
// autopilot so that a stale server on the same address goes first.
func (p *pilot) add(id, addr string) error {
	return p.ap.AddServer(&autopilot.Server{ID: raft.ServerID(id), Name: id, Address: raft.ServerAddress(addr),
		NodeStatus: autopilot.NodeAlive, RaftVersion: raft.ProtocolVersionMax})
}

// AutopilotConfig: dead servers are cleaned up; a server is unhealthy when
// it has not heard the leader for several heartbeats or the grace
// (whichever is longer, and never under 2 s: its gossiped contact is in
// whole seconds and up to a second old), and stable after four heartbeats
// healthy.
func (p *pilot) AutopilotConfig() *autopilot.Config {
	return &autopilot.Config{
		CleanupDeadServers:      true,
		LastContactThreshold:    max(p.grace, 4*p.heartbeat, 2*time.Second),
		MaxTrailingLogs:         1024,
		ServerStabilizationTime: 4 * p.heartbeat,
		Ext:                     p.voters,
	}
}

func (p *pilot) NotifyState(s *autopilot.State) {
	if !s.Healthy {
		p.log.Debug("autopilot: cluster not healthy", "failure_tolerance", s.FailureTolerance)
	}
}

// KnownServers are the servers gossip knows: the nodes that gossip raft
// membership or take part in the bootstrap (alive, failed past the grace,
// left), and, as left, the nodes that gossip themselves clients (a server
// whose raft directory was removed comes back as a client: autopilot
// removes it from raft). A raft server gossip does not know at all is
// stale, and autopilot removes it too.
func (p *pilot) KnownServers() map[raft.ServerID]*autopilot.Server {
	now := p.clock()
	_, leaderID := p.raft.LeaderWithID()
	out := map[raft.ServerID]*autopilot.Server{}
	for _, e := range p.gossip.Nodes() {
		ri := e.State.Raft
		if !e.HasState || !ri.Member && !ri.Client && len(ri.Proposal) == 0 {
			continue
		}
		st := autopilot.NodeUnknown
		switch {
		case ri.Client && !ri.Member:
			st = autopilot.NodeLeft
		case e.Status == nodestate.StatusAlive:
			st = autopilot.NodeAlive
		case e.Status == nodestate.StatusLeft:
			st = autopilot.NodeLeft
		case e.Status == nodestate.StatusDead && now.Sub(e.Since) >= p.grace:
			st = autopilot.NodeFailed
		}
		id := raft.ServerID(e.State.Name)
		out[id] = &autopilot.Server{ID: id, Name: e.State.Name, Address: raft.ServerAddress(e.State.RaftAddr()),
			NodeStatus: st, RaftVersion: raft.ProtocolVersionMax, IsLeader: id == leaderID}
		if ri.Fault != "" {
			out[id].Meta = map[string]string{metaLogFault: ri.Fault}
		}
	}
	return out
}

// FetchServerStats reads this server's stats from raft and the others'
// from what they gossip (publishStanding): no request per server.
func (p *pilot) FetchServerStats(_ context.Context, servers map[raft.ServerID]*autopilot.Server) map[raft.ServerID]*autopilot.ServerStats {
	out := map[raft.ServerID]*autopilot.ServerStats{}
	for id := range servers {
		if string(id) == p.self {
			st := p.raft.Stats()
			idx, _ := strconv.ParseUint(st["last_log_index"], 10, 64)
			term, _ := strconv.ParseUint(st["last_log_term"], 10, 64)
			out[id] = &autopilot.ServerStats{LastIndex: idx, LastTerm: term}
			continue
		}
		e, ok := p.gossip.Node(string(id))
		if !ok || !e.HasState || !e.State.Raft.Member {
			continue
		}
		ri := e.State.Raft
		out[id] = &autopilot.ServerStats{LastIndex: ri.Index, LastTerm: ri.Term, LastContact: time.Duration(ri.ContactMs) * time.Millisecond}
		if ri.Fault != "" {
			// A server that cannot write its log is not healthy whatever
			// its index says: autopilot reads a negative contact as
			// unhealthy, and demotes an unhealthy failed voter first.
			out[id].LastContact = -1
		}
	}
	return out
}

// metaLogFault is the autopilot.Server Meta key of a server's gossiped
// raft log fault (RaftInfo.Fault): the promoter treats the server as
// failed, to be demoted and never promoted while it lasts, but autopilot
// does not remove it (it is alive), so it catches up as a non-voter once
// it can write again.
const metaLogFault = "raft_log_fault"

// RemoveFailedServer removes a failed server from raft; autopilot wants
// it to return at once.
func (p *pilot) RemoveFailedServer(s *autopilot.Server) {
	go func() {
		if err := p.raft.RemoveServer(s.ID, 0, 5*time.Second).Error(); err != nil {
			p.log.Warn("autopilot: remove failed server", "server", s.ID, "err", err)
			return
		}
		p.log.Info("raft membership changed", "action", "remove", "server", s.ID, "why", "failed: "+string(s.NodeStatus))
	}()
}

// promoter is shoal's autopilot promoter: every server may vote, and
// leader.PlanVoters decides who does (the voter target; the rest stay
// warm-standby non-voters). clock is the agent's.
type promoter struct{ clock func() time.Time }

func (promoter) GetServerExt(*autopilot.Config, *autopilot.ServerState) interface{} { return nil }
func (promoter) GetStateExt(*autopilot.Config, *autopilot.State) interface{}        { return nil }
func (promoter) IsPotentialVoter(t autopilot.NodeType) bool                         { return t == autopilot.NodeVoter }

func (promoter) GetNodeTypes(_ *autopilot.Config, s *autopilot.State) map[raft.ServerID]autopilot.NodeType {
	out := make(map[raft.ServerID]autopilot.NodeType, len(s.Servers))
	for id := range s.Servers {
		out[id] = autopilot.NodeVoter
	}
	return out
}

func (promoter) FilterFailedServerRemovals(_ *autopilot.Config, _ *autopilot.State, f *autopilot.FailedServers) *autopilot.FailedServers {
	return f
}

// CalculatePromotionsAndDemotions converts autopilot's state for
// leader.PlanVoters; the voter target travels in the config's Ext.
func (p promoter) CalculatePromotionsAndDemotions(c *autopilot.Config, s *autopilot.State) autopilot.RaftChanges {
	target, _ := c.Ext.(int)
	return pilotChanges(s, target, p.clock(), s.ServerStabilizationTime(c))
}

// pilotChanges is leader.PlanVoters on autopilot's state at now.
func pilotChanges(s *autopilot.State, target int, now time.Time, stable time.Duration) autopilot.RaftChanges {
	var in []leader.PilotServer
	for id, ss := range s.Servers {
		faulty := ss.Server.Meta[metaLogFault] != ""
		in = append(in, leader.PilotServer{ID: string(id), Voter: ss.HasVotingRights() || ss.State == autopilot.RaftStaging,
			Leader: ss.State == autopilot.RaftLeader, Alive: ss.Server.NodeStatus == autopilot.NodeAlive && !faulty,
			Failed: ss.Server.NodeStatus == autopilot.NodeFailed || ss.Server.NodeStatus == autopilot.NodeLeft || faulty,
			Stable: ss.Health.IsStable(now, stable)})
	}
	promote, demote := leader.PlanVoters(in, target)
	var out autopilot.RaftChanges
	for _, id := range promote {
		out.Promotions = append(out.Promotions, raft.ServerID(id))
	}
	for _, id := range demote {
		out.Demotions = append(out.Demotions, raft.ServerID(id))
	}
	return out
}
