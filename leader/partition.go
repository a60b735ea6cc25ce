package leader

import (
	"slices"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// withFeatures is snap as a job of constraint c may use it: the nodes
// whose features (by name, from nodes) do not satisfy c count as
// unavailable. It says how many alive nodes do.
func withFeatures(snap placement.Snapshot, nodes []Node, c raftfsm.Constraint) (placement.Snapshot, int) {
	features := make(map[string][]string, len(nodes))
	for _, n := range nodes {
		features[n.Name] = n.Features
	}
	out := snap
	out.Nodes = slices.Clone(snap.Nodes)
	fit := 0
	for i := range out.Nodes {
		if !c.Matches(features[out.Nodes[i].Name]) {
			out.Nodes[i].Alive = false
		} else if out.Nodes[i].Alive {
			fit++
		}
	}
	return out, fit
}

// inPartition is snap as a job of partition p may use it: the nodes
// outside p count as unavailable, as excludeFailed counts the nodes an
// attempt lost, so that the network model keeps every node while
// placement chooses among the partition's.
func inPartition(snap placement.Snapshot, p raftfsm.Partition) placement.Snapshot {
	if len(p.Nodes) == 0 {
		return snap
	}
	out := snap
	out.Nodes = slices.Clone(snap.Nodes)
	for i := range out.Nodes {
		if !p.Holds(out.Nodes[i].Name) {
			out.Nodes[i].Alive = false
		}
	}
	return out
}
