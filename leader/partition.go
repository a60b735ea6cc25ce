package leader

import (
	"slices"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

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
