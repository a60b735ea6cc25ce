package raftnode

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/gossip"
)

// Bootstrap publishes this node's raft standing in g and, while it
// has none, bootstraps the cluster once expect agents agree (see
// bootstrapProposal and bootstrapReady). It returns once the node is a
// member, or when ctx ends.
func (n *Node) Bootstrap(ctx context.Context, g *gossip.Gossip, self string, expect int, log *slog.Logger) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var published []string
	for {
		if n.Member() {
			g.Update(func(s *gossip.NodeState) { s.Raft = gossip.RaftInfo{Member: true} })
			return
		}
		views := bootViews(g)
		prop := bootstrapProposal(views, expect)
		if !slices.Equal(prop, published) {
			g.Update(func(s *gossip.NodeState) { s.Raft.Proposal = prop })
			published = prop
			views = bootViews(g)
		}
		if bootstrapReady(self, views, prop) {
			n.bootstrap(views, prop, log)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-g.Changed():
		}
	}
}

func (n *Node) bootstrap(views []bootView, prop []string, log *slog.Logger) {
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

func bootViews(g *gossip.Gossip) []bootView {
	var out []bootView
	for _, e := range g.Nodes() {
		if !e.HasState {
			continue
		}
		out = append(out, bootView{
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

// bootView is what bootstrapping needs to know of one node, read from
// gossip.
type bootView struct {
	Name     string
	Alive    bool
	RaftAddr string // empty until the node's ports are known
	Member   bool
	Proposal []string
}

// bootstrapProposal is the set this node would bootstrap raft with: the
// first expect alive nodes by name, or nil when fewer are visible or when
// somebody already has raft state (then the cluster exists and its leader
// will add us). Taking the first names, not the first arrivals, makes every
// node that sees the same members propose the same set whatever the order
// of starts.
func bootstrapProposal(views []bootView, expect int) []string {
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

// bootstrapReady reports whether self may bootstrap with proposal: it is in
// the set and every node of the set is alive, has no raft state and
// proposes exactly the same set. All of them then bootstrap with identical
// configurations, which raft treats as one cluster; two different sets
// cannot both be agreed by the same nodes.
func bootstrapReady(self string, views []bootView, proposal []string) bool {
	if len(proposal) == 0 || !slices.Contains(proposal, self) {
		return false
	}
	byName := make(map[string]bootView, len(views))
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
