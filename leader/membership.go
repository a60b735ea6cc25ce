package leader

import (
	"slices"

	"github.com/shoal-hpc/shoal/internal/natsort"
	"github.com/shoal-hpc/shoal/nodestate"
)

// This file is the leader's part of who holds raft. A small server set
// (Config.Servers, voters included) runs raft; every other agent is a
// client. The decisions here are the pure ones:
//
//   - WantedServers: which clients should become servers while the
//     server count is below the target (the agent publishes the set in
//     gossip; a wanted client starts raft and gossips itself a server);
//   - Membership: which servers gossip says exist but raft's
//     configuration lacks (the leader adds them as non-voters);
//   - PlanVoters: the promoter's rule for hashicorp/raft-autopilot, which
//     promotes, demotes and removes dead servers (agent/autopilot.go
//     converts autopilot's state to PilotServer and back).

// ActionKind is a change to raft's configuration.
type ActionKind string

// The changes Membership asks for. Promotions, demotions and removals
// are autopilot's (PlanVoters decides the first two).
const (
	ActAdd ActionKind = "add-nonvoter"
)

// Action is one change to raft's configuration, applied in order; the
// agent stops at the first that fails (the next round plans again).
type Action struct {
	Kind ActionKind
	ID   string
	Addr string
	Why  string
}

// Membership is what raft's configuration (v.Servers) lacks given what
// gossip sees (v.Nodes): every live node that gossips itself a server
// (Node.Server: it runs raft, bootstrapped, restarted with raft state, or
// a wanted client that started raft) and is not in the configuration, or
// is there with another address, is added as a non-voter. Autopilot
// promotes it if the voters need it.
func Membership(v View) []Action {
	inConfig := make(map[string]Server, len(v.Servers))
	for _, s := range v.Servers {
		inConfig[s.ID] = s
	}
	var acts []Action
	for _, m := range v.Nodes {
		if m.Status != nodestate.StatusAlive || m.RaftAddr == "" || !m.Server || m.Name == v.Config.Self {
			continue
		}
		s, ok := inConfig[m.Name]
		switch {
		case !ok:
			acts = append(acts, Action{Kind: ActAdd, ID: m.Name, Addr: m.RaftAddr, Why: "a server in gossip, not in raft"})
		case s.Addr != m.RaftAddr:
			// Came back on another address: adding again updates it
			// (AddVoter for a voter, which keeps its vote).
			acts = append(acts, Action{Kind: ActAdd, ID: m.Name, Addr: m.RaftAddr, Why: "raft address changed"})
		}
	}
	return acts
}

// WantedServers is the set of clients the leader wants to become servers:
// when fewer than Config.Servers servers are up, the missing number of
// clients, first by name among those alive, with their state and raft
// address known and not drained. A server counts while it is in raft's
// configuration and not dead or gone in gossip (autopilot removes the
// dead after the grace), or while it gossips itself a server and waits to
// be added. The order by name keeps the choice stable from round to
// round and from one leader to the next.
func WantedServers(v View) []string {
	target := v.Config.Servers
	if target <= 0 {
		return nil
	}
	byName := make(map[string]Node, len(v.Nodes))
	for _, n := range v.Nodes {
		byName[n.Name] = n
	}
	up := map[string]bool{}
	for _, s := range v.Servers {
		n, ok := byName[s.ID]
		if s.ID == v.Config.Self || ok && n.Status != nodestate.StatusDead && n.Status != nodestate.StatusLeft {
			up[s.ID] = true
		}
	}
	for _, n := range v.Nodes {
		if n.Server && n.Status == nodestate.StatusAlive {
			up[n.Name] = true
		}
	}
	need := target - len(up)
	if need <= 0 {
		return nil
	}
	var cands []string
	for _, n := range v.Nodes {
		if up[n.Name] || n.Server || n.Status != nodestate.StatusAlive || !n.HasState || n.RaftAddr == "" || drained(v, n.Name) {
			continue
		}
		cands = append(cands, n.Name)
	}
	natsort.Sort(cands) // node2 before node10, as an operator reads them
	if len(cands) > need {
		cands = cands[:need]
	}
	return cands
}

func drained(v View, name string) bool {
	if v.State == nil {
		return false
	}
	_, ok := v.State.Drains[name]
	return ok
}

// PilotServer is one raft server as the promoter sees it: its suffrage,
// whether gossip has it alive, or failed (dead past the grace, or gone),
// and whether autopilot finds it healthy for the stabilisation time.
type PilotServer struct {
	ID     string
	Voter  bool
	Leader bool
	Alive  bool
	Failed bool
	Stable bool
}

// PlanVoters is shoal's promoter: keep `target` voters, the other servers
// non-voters (warm standbys).
//
//   - A failed voter is demoted (autopilot applies one such demotion per
//     round, before any promotion, while the voters are odd): the
//     configuration never holds an even number of voters with a dead
//     one among them, which a second death would leave without quorum.
//   - While fewer than target voters are not failed, promote stable live
//     non-voters, by name, until the target is met. A voter dead within
//     the grace still counts: it is replaced once it has failed.
//   - Live voters above the target (a replaced voter came back) are
//     demoted, last by name, never the leader, once the target is met.
func PlanVoters(servers []PilotServer, target int) (promote, demote []string) {
	s := slices.Clone(servers)
	slices.SortFunc(s, func(a, b PilotServer) int { return natsort.Compare(a.ID, b.ID) })
	counted, alive := 0, 0
	for _, x := range s {
		switch {
		case !x.Voter:
		case x.Failed && !x.Leader:
			demote = append(demote, x.ID)
		default:
			counted++
			if x.Alive || x.Leader {
				alive++
			}
		}
	}
	for _, x := range s {
		if counted >= target {
			break
		}
		if !x.Voter && x.Alive && x.Stable {
			promote = append(promote, x.ID)
			counted++
		}
	}
	if len(promote) > 0 {
		return promote, demote
	}
	for i := len(s) - 1; i >= 0 && alive > target; i-- {
		x := s[i]
		if x.Voter && x.Alive && !x.Failed && !x.Leader {
			demote = append(demote, x.ID)
			alive--
		}
	}
	return promote, demote
}
