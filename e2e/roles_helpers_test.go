package e2e

import (
	"slices"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// census is the alive members by role, as one node's `shoal members` lists
// them.
type census struct{ testcluster.Census }

func countRoles(ms []api.Member) census { return census{testcluster.CountRoles(ms)} }

// servers is the alive raft servers, leader first.
func (c census) servers() []string {
	return slices.Concat(c.Leader, c.Voters, c.Nonvoters)
}

// full reports whether the census shows the server set at its target of
// voters and at least its target of servers, every other of the alive
// agents a client. More servers than the target is the design's own
// outcome, not a fault: a server stays one until it stops, and a client
// the leader wanted while another server looked gone (suspected in
// gossip at formation on a loaded machine) stays a non-voter beside it.
func (c census) full(voters, servers, alive int) bool {
	return len(c.Leader) == 1 && len(c.Leader)+len(c.Voters) == voters &&
		len(c.Nonvoters) >= servers-voters && len(c.Leader)+len(c.Voters)+len(c.Nonvoters)+len(c.Clients) == alive
}

// onClients is the hosts of a job's last attempt that were clients.
func onClients(j api.Job, clients []string) []string {
	var out []string
	if len(j.Attempts) == 0 {
		return nil
	}
	for _, h := range j.Attempts[len(j.Attempts)-1].Hosts {
		if slices.Contains(clients, h.Node) {
			out = append(out, h.Node)
		}
	}
	return out
}
