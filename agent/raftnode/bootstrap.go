package raftnode

import (
	"cmp"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/gossip"
)

// Formation from gossip, for an agent that has no raft yet (the agent's
// roles loop drives it, agent/roles.go): while no node gossips itself a
// raft member, the agents propose the first expect names they see
// (BootstrapProposal, published as RaftInfo.Proposal) and those of the
// set start raft and bootstrap it together once all of them propose the
// same set (BootstrapReady, Node.BootstrapWith). Once a member exists the
// cluster exists (ClusterExists): the others are clients until the leader
// wants them as servers.

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
			Name: e.State.Name, Alive: e.Status == gossip.StatusAlive,
			RaftAddr: Addr(e.State), Member: e.State.Raft.Member, Proposal: e.State.Raft.Proposal,
		})
	}
	return out
}

// Addr is a node's raft address as its gossiped state tells, empty until
// its address and raft port are known.
func Addr(s gossip.NodeState) string {
	if s.Addr == "" || s.RaftPort == 0 {
		return ""
	}
	return net.JoinHostPort(s.Addr, strconv.Itoa(s.RaftPort))
}

// BootView is what bootstrapping needs to know of one node, read from
// gossip.
type BootView struct {
	Name     string
	Alive    bool
	RaftAddr string // empty until the node's ports are known
	Member   bool
	Proposal []string
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
// the set and every node of the set is alive, has no raft state and
// proposes exactly the same set. All of them then bootstrap with identical
// configurations, which raft treats as one cluster; two different sets
// cannot both be agreed by the same nodes.
func BootstrapReady(self string, views []BootView, proposal []string) bool {
	if len(proposal) == 0 || !slices.Contains(proposal, self) {
		return false
	}
	byName := make(map[string]BootView, len(views))
	for _, v := range views {
		byName[v.Name] = v
	}
	for _, name := range proposal {
		v, ok := byName[name]
		if !ok || !v.Alive || v.Member || v.RaftAddr == "" || !slices.Equal(v.Proposal, proposal) {
			return false
		}
	}
	return true
}
