package agent

import (
	"slices"
	"sort"
)

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
