package agent

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
)

// This file decides the agent's role. Every agent runs the same binary;
// a small set of servers (Config.Servers, voters included) holds raft and
// every other agent is a client:
//
//   - an agent with raft state on disk is a server from the start (it was
//     one before it stopped);
//   - while no agent gossips raft membership, the first BootstrapExpect
//     agents by name bootstrap raft together (raftnode's formation);
//   - once a cluster exists, an agent without raft state is a client: it
//     follows the replicated state from a server (agent/replica) into its
//     own FSM, so its job reconciler, probes and reads work as on a
//     server, and it forwards writes to the leader (apply.go);
//   - the leader publishes in gossip the clients it wants as servers
//     (leader.WantedServers, RaftInfo.Want); a wanted client stops
//     following, starts raft on the state it followed (raftnode's Floor:
//     raft's older entries are skipped, so its jobs see no older state)
//     and gossips itself a member; the leader adds it as a non-voter and
//     autopilot promotes it if the voters need it (autopilot.go).
//
// A server stays a server until it stops; an extra server (one that came
// back once the set was full) is a non-voter. Servers gossip their raft
// standing (publishStanding), from which clients answer `shoal members`
// and `shoal leader` and the leader's autopilot reads their health.

// keepRole runs the role decisions until the agent stops.
func (a *Agent) keepRole(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var (
		// the agent whose different proposal holds formation, since
		// when, and whether that was logged
		heldBy    string
		heldSince time.Time
		heldSaid  bool
		follower  *replica.Follower
		published []string
		pub       standing
	)
	defer func() {
		if follower != nil {
			follower.Stop()
		}
	}()
	for {
		if s := a.srv.load(); s != nil {
			if follower != nil {
				follower.Stop()
				follower = nil
			}
			a.publishStanding(s, &pub)
		} else {
			views := raftnode.BootViews(a.gossip)
			switch {
			case raftnode.ClusterExists(views):
				if follower == nil {
					follower = a.startFollower(ctx)
				}
				if !a.gossip.Self().Raft.Client {
					a.gossip.Update(func(s *nodestate.NodeState) { s.Raft = nodestate.RaftInfo{Client: true} })
					a.log.Info("a raft cluster exists: this agent is a client", "servers", a.cfg.Servers)
				}
				if a.wanted() || raftnode.JoinsBootstrap(a.cfg.Name, published, views) {
					if follower != nil {
						follower.Stop()
						follower = nil
					}
					floor := a.fsm.Index()
					if _, err := a.startServer(floor); err != nil {
						a.log.Error("become a server", "err", err)
						break
					}
					a.gossip.Update(func(s *nodestate.NodeState) { s.Raft = nodestate.RaftInfo{Member: true} })
					a.log.Info("this agent becomes a server: raft started on the followed state", "index", floor)
				}
			default:
				prop := raftnode.BootstrapProposal(views, a.cfg.BootstrapExpect)
				if !slices.Equal(prop, published) {
					a.gossip.Update(func(s *nodestate.NodeState) { s.Raft.Proposal = prop })
					published = prop
					views = raftnode.BootViews(a.gossip)
				}
				// Formation waits while another live node proposes a
				// different set. While agents start that lasts a gossip
				// round or two; an agent with another bootstrap_expect, or
				// one that cannot see every agent, holds it for good.
				if other, set := raftnode.OtherProposal(views, prop); other != heldBy {
					heldBy, heldSince, heldSaid = other, time.Now(), false
				} else if other != "" && !heldSaid && time.Since(heldSince) > 10*time.Second {
					a.log.Warn("raft bootstrap waits: another agent proposes a different voter set (bootstrap_expect must be the same on every agent)",
						"agent", other, "its_set", set, "our_set", prop)
					heldSaid = true
				}
				if raftnode.BootstrapReady(a.cfg.Name, views, prop) {
					s, err := a.startServer(0)
					if err != nil {
						a.log.Error("start raft to bootstrap", "err", err)
						break
					}
					s.node.BootstrapWith(views, prop, a.log)
					// The set stays in gossip until a leader writes
					// (raftnode.FormationSet): a voter of it that
					// re-proposed meanwhile finds itself there.
					a.gossip.Update(func(s *nodestate.NodeState) { s.Raft = nodestate.RaftInfo{Member: true, Proposal: prop} })
				}
			}
		}
		// A tick, not gossip.Changed: that channel is shared, and the
		// leader loop's wake-ups must not be taken by this one.
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// wanted reports whether the leader, as gossip tells it, wants this
// client as a server.
func (a *Agent) wanted() bool {
	name, _ := gossipLeader(a.gossip)
	if name == "" {
		return false
	}
	e, ok := a.gossip.Node(name)
	return ok && slices.Contains(e.State.Raft.Want, a.cfg.Name)
}

// startFollower follows the state from a live server into the agent's
// FSM, over the servers' mutual-TLS API (GET /v1/replicate); nil when it
// cannot start (the next round tries again).
func (a *Agent) startFollower(ctx context.Context) *replica.Follower {
	f, err := replica.Start(ctx, replica.Config{
		FSM: a.fsm, Wake: []chan struct{}{a.appliedLeader, a.appliedJobs, a.appliedEvents},
		Servers: func() []string { return gossipServers(a.gossip, a.cfg.Name) },
		Open:    replica.OpenHTTP(a.peers.stream, a.peers.addrOf),
		Log:     a.log,
	})
	if err != nil {
		a.log.Error("follow the replicated state", "err", err)
		return nil
	}
	return f
}

// gossipServers are the alive nodes that gossip raft membership, but self.
func gossipServers(g *gossip.Gossip, self string) []string {
	var out []string
	for _, e := range g.Nodes() {
		if e.HasState && e.Status == nodestate.StatusAlive && e.State.Raft.Member && e.State.Name != self {
			out = append(out, e.State.Name)
		}
	}
	slices.Sort(out)
	return out
}

// gossipLeader is the leader as the servers gossip it: the alive node
// that says it leads in the highest term, with its raft address.
func gossipLeader(g *gossip.Gossip) (name, addr string) {
	var term uint64
	for _, e := range g.Nodes() {
		ri := e.State.Raft
		if e.HasState && e.Status == nodestate.StatusAlive && ri.Member && ri.Leader && (name == "" || ri.Term > term) {
			name, addr, term = e.State.Name, e.State.RaftAddr(), ri.Term
		}
	}
	return name, addr
}

// gossipRoles are the members' roles as gossip tells them: leader, voter,
// nonvoter for servers, client, or none while a node has not settled.
func gossipRoles(g *gossip.Gossip) map[string]string {
	lead, _ := gossipLeader(g)
	out := map[string]string{}
	for _, e := range g.Nodes() {
		ri := e.State.Raft
		switch {
		case e.State.Name == lead:
			out[e.State.Name] = "leader"
		case ri.Member && ri.Voter:
			out[e.State.Name] = "voter"
		case ri.Member:
			out[e.State.Name] = "nonvoter"
		case ri.Client:
			out[e.State.Name] = "client"
		}
	}
	return out
}

// standing is a server's raft standing as it last gossiped it.
type standing struct {
	voter, leader bool
	term, index   uint64
	contactMs     int64
	// fault is why the raft log cannot be written, "" when it can;
	// probed when the raft directory was last probed (logfault.go).
	fault string
	// at is when it was last gossiped, checked when last read from raft.
	at, checked, probed time.Time
}

// publishStanding gossips this server's raft standing (RaftInfo) when it
// changed: at once for its suffrage, leadership, term and a lost contact
// (in whole seconds), at most once a second for its index alone, so a
// busy log does not flood gossip. A server that no longer leads drops
// the wanted set it published.
func (a *Agent) publishStanding(s *server, last *standing) {
	now := a.clock()
	st := standing{leader: s.raft.State() == raft.Leader}
	if st.leader == last.leader && now.Sub(last.checked) < time.Second {
		return // raft's Stats and configuration are not free: once a second, or at a leadership change
	}
	last.checked = now
	if f := s.raft.GetConfiguration(); f.Error() == nil {
		for _, srv := range f.Configuration().Servers {
			if string(srv.ID) == a.cfg.Name {
				st.voter = srv.Suffrage == raft.Voter
			}
		}
	}
	stats := s.raft.Stats()
	st.index, _ = strconv.ParseUint(stats["last_log_index"], 10, 64)
	st.term, _ = strconv.ParseUint(stats["last_log_term"], 10, 64)
	if !st.leader {
		// Read the clock after raft answered: on a starved machine the
		// calls above take seconds, and a contact during them must not
		// come out negative (gossip refuses a negative contact). raft's
		// own clock, not the agent's: LastContact is a time raft read.
		if lc := s.raft.LastContact(); lc.IsZero() {
			st.contactMs = int64(time.Hour / time.Millisecond)
		} else {
			st.contactMs = max(0, time.Since(lc).Milliseconds()/1000*1000)
		}
	}
	st.fault = a.checkLogFault(s, st.leader, now, last)
	st.probed = last.probed
	self := a.gossip.Self().Raft
	changed := !self.Member || self.Client || st.voter != last.voter || st.leader != last.leader || st.term != last.term ||
		st.contactMs != last.contactMs || !st.leader && len(self.Want) > 0 || st.fault != last.fault
	if !changed && (st.index == last.index || now.Sub(last.at) < time.Second) {
		return
	}
	st.at, st.checked = now, now
	*last = st
	a.gossip.Update(func(g *nodestate.NodeState) {
		want := g.Raft.Want
		if !st.leader {
			want = nil
		}
		g.Raft = nodestate.RaftInfo{Member: true, Voter: st.voter, Leader: st.leader, Term: st.term, Index: st.index,
			ContactMs: st.contactMs, Want: want, Fault: st.fault, Proposal: raftnode.FormationSet(st.index, g.Raft.Proposal)}
	})
}
