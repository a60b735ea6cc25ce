package raftnode

import (
	"cmp"
	"log/slog"
	"slices"
	"sort"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
)

// Formation from gossip, for an agent that has no raft yet (the agent's
// roles loop drives it, agent/roles.go): while no node gossips itself a
// raft member, the agents propose the first expect names they see
// (BootstrapProposal, published as RaftInfo.Proposal) and those of the
// set start raft and bootstrap it together once all of them propose the
// same set (BootstrapReady, Node.BootstrapWith). Once a member exists the
// cluster exists (ClusterExists): the others are clients until the leader
// wants them as servers, but for the voters of the bootstrapped set that
// had not bootstrapped yet (JoinsBootstrap).

// BootstrapWith bootstraps raft with the nodes of prop as voters, their
// addresses as views tell.
func (n *Node) BootstrapWith(views []BootView, prop []string, log *slog.Logger) {
	n.bootstrap(views, prop, log)
}

// ClusterExists reports whether some node gossips raft membership.
func ClusterExists(views []BootView) bool {
	return slices.ContainsFunc(views, func(v BootView) bool { return v.Member })
}

func (n *Node) bootstrap(views []BootView, prop []string, log *slog.Logger) {
	var conf raft.Configuration
	for _, v := range views {
		if slices.Contains(prop, v.Name) {
			conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(v.Name), Address: raft.ServerAddress(v.RaftAddr), Suffrage: raft.Voter})
		}
	}
	slices.SortFunc(conf.Servers, func(x, y raft.Server) int { return cmp.Compare(x.ID, y.ID) })
	if err := n.Raft.BootstrapCluster(conf).Error(); err != nil && err != raft.ErrCantBootstrap {
		log.Error("bootstrap raft", "err", err)
		return
	}
	log.Info("bootstrapped raft cluster", "voters", prop)
}

// BootViews reads what formation needs of every node from gossip.
func BootViews(g *gossip.Gossip) []BootView {
	var out []BootView
	for _, e := range g.Nodes() {
		if !e.HasState {
			continue
		}
		out = append(out, BootView{
			Name: e.State.Name, Alive: e.Status == nodestate.StatusAlive,
			RaftAddr: e.State.RaftAddr(), Member: e.State.Raft.Member, Proposal: e.State.Raft.Proposal,
			Leader: e.State.Raft.Leader, Index: e.State.Raft.Index,
		})
	}
	return out
}

// JoinsBootstrap reports whether self, an agent without raft state in a
// cluster that exists, is a voter of the configuration others bootstrapped
// and must start raft (without bootstrapping) for that configuration to
// elect a leader. Either a member still gossips the set it bootstrapped
// with (FormationSet) and self is in it, or self's own last proposal holds
// self and every member the cluster has.
//
// The first way covers a start race: the set's first nodes bootstrap once
// all of it proposes the same set, while a slower node of the set, seeing a
// newly started agent whose name sorts earlier, re-proposes a set without
// one of them before it sees them as members. Its own proposal then no
// longer names the members, yet their configuration names it; without it,
// and with another of the set in the same state, they never have a quorum,
// and no leader ever exists to want the clients as servers.
//
// A member's set counts only while the cluster is still forming: from a
// live member, and while no member gossips a leader or a log past the
// bootstrap entry. A set gossiped by a dead member, or by one whose log
// is stuck (a partitioned follower publishes its own index), must not
// bring back a voter whose raft state was wiped after a leader wrote: a
// voter with an empty log could elect a leader that lacks committed
// entries.
func JoinsBootstrap(self string, published []string, views []BootView) bool {
	members, inOwn, named, formed := 0, slices.Contains(published, self), false, false
	for _, v := range views {
		if !v.Member {
			continue
		}
		members++
		if v.Leader || v.Index > bootstrapIndex {
			formed = true
		}
		if v.Alive && slices.Contains(v.Proposal, self) {
			named = true
		}
		if !slices.Contains(published, v.Name) {
			inOwn = false
		}
	}
	return named && !formed || members > 0 && inOwn
}

// FormationSet is what a bootstrapped server gossips as its Proposal: the
// set it bootstrapped with, for as long as its raft log holds nothing past
// the bootstrap configuration (index), so that the set's other voters find
// themselves in it (JoinsBootstrap); nil once a leader has written, since
// from then on the leader adds servers itself, and a wiped voter must come
// back as a client (autopilot removes it) rather than as a voter with an
// empty log.
func FormationSet(index uint64, bootstrapped []string) []string {
	if index > bootstrapIndex {
		return nil
	}
	return bootstrapped
}

// bootstrapIndex is the raft log index of the configuration
// BootstrapCluster writes; a cluster's first leader appends after it.
const bootstrapIndex = 1

// OtherProposal names a live node that proposes a set other than
// proposal, and its set: what keeps BootstrapReady false while the
// proposals differ. It returns "" when there is none or proposal is empty.
func OtherProposal(views []BootView, proposal []string) (string, []string) {
	if len(proposal) == 0 {
		return "", nil
	}
	for _, v := range views {
		if v.Alive && !v.Member && len(v.Proposal) > 0 && !slices.Equal(v.Proposal, proposal) {
			return v.Name, v.Proposal
		}
	}
	return "", nil
}

// BootView is what bootstrapping needs to know of one node, read from
// gossip.
type BootView struct {
	Name     string
	Alive    bool
	RaftAddr string // empty until the node's ports are known
	Member   bool
	Proposal []string
	// Leader and Index are a member's raft standing as it gossips it: it
	// leads, and its last log index.
	Leader bool
	Index  uint64
}

// BootstrapProposal is the set this node would bootstrap raft with: the
// first expect alive nodes by name, or nil when fewer are visible or when
// somebody already has raft state (then the cluster exists and its leader
// will add us). Taking the first names, not the first arrivals, makes every
// node that sees the same members propose the same set whatever the order
// of starts.
func BootstrapProposal(views []BootView, expect int) []string {
	var names []string
	for _, v := range views {
		if v.Member {
			return nil
		}
		if v.Alive && v.RaftAddr != "" {
			names = append(names, v.Name)
		}
	}
	if len(names) < expect {
		return nil
	}
	sort.Strings(names)
	return names[:expect]
}

// BootstrapReady reports whether self may bootstrap with proposal: it is in
// the set, every node of the set is alive, has no raft state and proposes
// exactly the same set, and no other live node proposes a different one.
// All of the set then bootstrap with identical configurations, which raft
// treats as one cluster. The last condition closes a window in which two
// sets could both be agreed: a node that proposes another set may be one
// that has just bootstrapped it, whose membership this node has not heard
// yet (the set's slower nodes then join it, JoinsBootstrap); once every
// node sees every other, all proposals are equal and it holds.
func BootstrapReady(self string, views []BootView, proposal []string) bool {
	if len(proposal) == 0 || !slices.Contains(proposal, self) {
		return false
	}
	byName := make(map[string]BootView, len(views))
	for _, v := range views {
		byName[v.Name] = v
		if v.Alive && len(v.Proposal) > 0 && !slices.Equal(v.Proposal, proposal) {
			return false
		}
	}
	for _, name := range proposal {
		v, ok := byName[name]
		if !ok || !v.Alive || v.Member || v.RaftAddr == "" || !slices.Equal(v.Proposal, proposal) {
			return false
		}
	}
	return true
}
