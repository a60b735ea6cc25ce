package leader

import (
	"sort"
	"time"
)

// ActionKind is a change to raft's configuration.
type ActionKind string

// The changes Membership asks for.
const (
	ActAdd     ActionKind = "add-nonvoter"
	ActPromote ActionKind = "promote"
	ActDemote  ActionKind = "demote"
	ActRemove  ActionKind = "remove"
)

// Action is one change to raft's configuration, applied in order; the
// agent stops at the first that fails (the next round plans again).
type Action struct {
	Kind ActionKind
	ID   string
	Addr string
	Why  string
}

// Membership is the leader's membership reconciler: what raft's
// configuration (v.Servers) should become given what gossip sees
// (v.Nodes). It removes the dead (past a grace period) and the departed,
// adds every live node as a non-voter, and promotes live non-voters until
// the target voter count is met, so a lab that loses machines one by one
// keeps its quorum.
func Membership(v View) []Action {
	return planMembership(v.Config.Self, v.Servers, v.Nodes, v.Config.Voters, v.Config.DeadVoterGrace, v.Now)
}

func planMembership(leader string, servers []Server, members []Node, voters int, grace time.Duration, now time.Time) []Action {
	byName := make(map[string]Node, len(members))
	for _, m := range members {
		byName[m.Name] = m
	}
	inConfig := make(map[string]Server, len(servers))
	for _, s := range servers {
		inConfig[s.ID] = s
	}
	var acts []Action
	removed := map[string]bool{}
	for _, s := range servers {
		if s.ID == leader {
			continue
		}
		m, ok := byName[s.ID]
		switch {
		case ok && m.Status == StatusLeft:
			acts = append(acts, Action{Kind: ActRemove, ID: s.ID, Why: "left the cluster"})
			removed[s.ID] = true
		case ok && m.Status == StatusDead && now.Sub(m.Since) >= grace:
			acts = append(acts, Action{Kind: ActRemove, ID: s.ID, Why: "dead for " + now.Sub(m.Since).Round(time.Second).String()})
			removed[s.ID] = true
		}
	}
	healthy := func(name string) bool {
		if name == leader {
			return true
		}
		m, ok := byName[name]
		return ok && m.Status == StatusAlive
	}
	for _, m := range members {
		if m.Status != StatusAlive || m.RaftAddr == "" {
			continue
		}
		s, ok := inConfig[m.Name]
		switch {
		case !ok:
			acts = append(acts, Action{Kind: ActAdd, ID: m.Name, Addr: m.RaftAddr, Why: "alive in gossip, not in raft"})
		case s.Addr != m.RaftAddr && m.Name != leader:
			// Came back on another address: re-adding updates it.
			kind := ActAdd
			if s.Voter {
				kind = ActPromote
			}
			acts = append(acts, Action{Kind: kind, ID: m.Name, Addr: m.RaftAddr, Why: "raft address changed"})
		}
	}

	nVoters := 0
	for _, s := range servers {
		if s.Voter && !removed[s.ID] {
			nVoters++
		}
	}
	if nVoters < voters {
		// Promote live non-voters, by name for determinism. Nodes added
		// in this same round are promoted in a later one, once raft has
		// them.
		var cands []string
		for _, s := range servers {
			if !s.Voter && !removed[s.ID] && healthy(s.ID) && s.Addr == byName[s.ID].RaftAddr {
				cands = append(cands, s.ID)
			}
		}
		sort.Strings(cands)
		for _, id := range cands {
			if nVoters >= voters {
				break
			}
			acts = append(acts, Action{Kind: ActPromote, ID: id, Addr: inConfig[id].Addr, Why: "voters below target"})
			nVoters++
		}
	}
	if nVoters > voters {
		// Too many voters (a replaced voter came back): demote the live
		// ones last by name, never the leader.
		var vs []string
		for _, s := range servers {
			if s.Voter && !removed[s.ID] && s.ID != leader {
				vs = append(vs, s.ID)
			}
		}
		sort.Sort(sort.Reverse(sort.StringSlice(vs)))
		for _, id := range vs {
			if nVoters <= voters {
				break
			}
			acts = append(acts, Action{Kind: ActDemote, ID: id, Why: "voters above target"})
			nVoters--
		}
	}
	return acts
}
