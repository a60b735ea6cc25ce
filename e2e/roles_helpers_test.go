package e2e

import (
	"fmt"
	"slices"

	"github.com/shoal-hpc/shoal/agent/api"
)

// census is the alive members by role, as one node's `shoal members` lists
// them.
type census struct {
	leader, voters, nonvoters, clients []string
}

func (c census) String() string {
	return fmt.Sprintf("leader %v voters %v nonvoters %v clients %d %v", c.leader, c.voters, c.nonvoters, len(c.clients), c.clients)
}

func countRoles(ms []api.Member) census {
	var out census
	for _, m := range ms {
		if m.Status != "alive" {
			continue
		}
		switch m.Role {
		case "leader":
			out.leader = append(out.leader, m.Name)
		case "voter":
			out.voters = append(out.voters, m.Name)
		case "nonvoter":
			out.nonvoters = append(out.nonvoters, m.Name)
		case "client":
			out.clients = append(out.clients, m.Name)
		}
	}
	return out
}

// servers is the alive raft servers, leader first.
func (c census) servers() []string {
	return slices.Concat(c.leader, c.voters, c.nonvoters)
}

// full reports whether the census shows the server set at its target of
// voters and non-voters, every other of the alive agents a client.
func (c census) full(voters, servers, alive int) bool {
	return len(c.leader) == 1 && len(c.leader)+len(c.voters) == voters &&
		len(c.nonvoters) == servers-voters && len(c.clients) == alive-servers
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
