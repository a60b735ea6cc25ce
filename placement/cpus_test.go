package placement_test

import (
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// TestCPUsPerProcTakeSlots: a process of 4 CPUs takes 4 of a node's free cores, for every policy.
func TestCPUsPerProcTakeSlots(t *testing.T) {
	t.Parallel()
	nodes := []placement.Node{node("a", 4, 0), node("b", 4, 0)}
	snap := placement.Snapshot{Nodes: nodes, Links: fullMesh(nodes, 0.1, 1000, 1000)}
	for _, policy := range []string{"netload", "paper", "random", "sequential", "load"} {
		d, err := placement.Place(snap, placement.Request{N: 2, CPUsPerProc: 4, Policy: policy, Seed: 1})
		if err != nil || d.Wait || len(d.Hosts) != 2 {
			t.Errorf("%s: 2 processes of 4 CPUs on two idle 4-core nodes: %s (wait %v %q, err %v), want one on each", policy, hostsString(d), d.Wait, d.WaitReason, err)
		}
		d, err = placement.Place(snap, placement.Request{N: 3, CPUsPerProc: 4, Policy: policy, Seed: 1})
		if err != nil || !d.Wait {
			t.Errorf("%s: 3 processes of 4 CPUs on 8 free cores: %s (err %v), want a wait", policy, hostsString(d), err)
		}
	}
}
