package agent

import (
	"sort"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
)

// The leader's membership reconciler, as a pure function: what raft's
// configuration should become given what gossip sees. It removes the
// dead (past a grace period) and the departed, adds every live node as a
// non-voter, and promotes live non-voters until the target voter count is
// met, so a lab that loses machines one by one keeps its quorum.

type server struct {
	ID    string
	Addr  string
	Voter bool
}

type memberView struct {
	Name     string
	RaftAddr string
	Status   gossip.Status
	Since    time.Time
}

type actionKind string

const (
	actAdd     actionKind = "add-nonvoter"
	actPromote actionKind = "promote"
	actDemote  actionKind = "demote"
	actRemove  actionKind = "remove"
)

type action struct {
	Kind actionKind
	ID   string
	Addr string
	Why  string
}

func planMembership(leader string, servers []server, members []memberView, voters int, grace time.Duration, now time.Time) []action {
	byName := make(map[string]memberView, len(members))
	for _, m := range members {
		byName[m.Name] = m
	}
	inConfig := make(map[string]server, len(servers))
	for _, s := range servers {
		inConfig[s.ID] = s
	}
	var acts []action
	removed := map[string]bool{}
	for _, s := range servers {
		if s.ID == leader {
			continue
		}
		m, ok := byName[s.ID]
		switch {
		case ok && m.Status == gossip.StatusLeft:
			acts = append(acts, action{Kind: actRemove, ID: s.ID, Why: "left the cluster"})
			removed[s.ID] = true
		case ok && m.Status == gossip.StatusDead && now.Sub(m.Since) >= grace:
			acts = append(acts, action{Kind: actRemove, ID: s.ID, Why: "dead for " + now.Sub(m.Since).Round(time.Second).String()})
			removed[s.ID] = true
		}
	}
	healthy := func(name string) bool {
		if name == leader {
			return true
		}
		m, ok := byName[name]
		return ok && m.Status == gossip.StatusAlive
	}
	for _, m := range members {
		if m.Status != gossip.StatusAlive || m.RaftAddr == "" {
			continue
		}
		s, ok := inConfig[m.Name]
		switch {
		case !ok:
			acts = append(acts, action{Kind: actAdd, ID: m.Name, Addr: m.RaftAddr, Why: "alive in gossip, not in raft"})
		case s.Addr != m.RaftAddr && m.Name != leader:
			// Came back on another address: re-adding updates it.
			kind := actAdd
			if s.Voter {
				kind = actPromote
			}
			acts = append(acts, action{Kind: kind, ID: m.Name, Addr: m.RaftAddr, Why: "raft address changed"})
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
			acts = append(acts, action{Kind: actPromote, ID: id, Addr: inConfig[id].Addr, Why: "voters below target"})
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
			acts = append(acts, action{Kind: actDemote, ID: id, Why: "voters above target"})
			nVoters--
		}
	}
	return acts
}
