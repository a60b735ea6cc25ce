package leader

import (
	"maps"

	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// recordSwitches proposes set_switches when the switches inferred from
// the network rows, for the nodes that declare none, differ from those
// raft holds. It infers again only when a bandwidth test newer than the
// last inference has arrived (ProbesBook.SwitchesAt): between tests the
// answer cannot change.
func recordSwitches(v View, b ProbesBook) ([]Command, ProbesBook) {
	var latest int64
	for _, n := range v.Nodes {
		for _, c := range n.Net {
			latest = max(latest, c.BWAt)
		}
	}
	if latest == 0 || latest <= b.SwitchesAt {
		return nil, b
	}
	b.SwitchesAt = latest
	names, declared, ms := modelInputs(v.Nodes)
	asg := netmodel.Infer(names, declared, ms, v.Config.Probes.Model)
	want := map[string]string{}
	for n, s := range asg {
		if s.Inferred && s.Name != "" {
			want[n] = s.Name
		}
	}
	if maps.Equal(want, v.State.Switches) || (len(want) == 0 && len(v.State.Switches) == 0) {
		return nil, b
	}
	return []Command{{Type: raftfsm.CmdSetSwitches, Body: raftfsm.SetSwitches{Switches: want},
		After: note("inferred switches recorded", "nodes", len(want), "switches", countDistinct(want))}}, b
}

func countDistinct(m map[string]string) int {
	seen := map[string]bool{}
	for _, v := range m {
		seen[v] = true
	}
	return len(seen)
}
