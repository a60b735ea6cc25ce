package testcluster

import (
	"fmt"

	"github.com/shoal-hpc/shoal/agent/api"
)

// Census is the alive members by role, as one node's `shoal members`
// lists them: the roles tests of the agent (in-process agents) and e2e
// (processes, namespaces) count with it.
type Census struct {
	Leader, Voters, Nonvoters, Clients []string
}

func (c Census) String() string {
	return fmt.Sprintf("leader %v voters %v nonvoters %v clients %d %v", c.Leader, c.Voters, c.Nonvoters, len(c.Clients), c.Clients)
}

// CountRoles sorts the alive members of a members listing by role.
func CountRoles(ms []api.Member) Census {
	var out Census
	for _, m := range ms {
		if m.Status != "alive" {
			continue
		}
		switch m.Role {
		case "leader":
			out.Leader = append(out.Leader, m.Name)
		case "voter":
			out.Voters = append(out.Voters, m.Name)
		case "nonvoter":
			out.Nonvoters = append(out.Nonvoters, m.Name)
		case "client":
			out.Clients = append(out.Clients, m.Name)
		}
	}
	return out
}
