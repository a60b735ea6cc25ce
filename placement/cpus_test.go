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

// TestCPUsPerProcSpillByWholeProcesses: oversubscription of processes of
// 4 CPUs goes where it oversubscribes least counted in such processes. a
// (4 idle cores) and b (16 cores, 12 held by shoal jobs) each take one
// process; the third goes to b, which it takes to 20 of 16 cores rather
// than a's 8 of 4. Counting a node's room in cores but its processes in
// processes sends it to a.
func TestCPUsPerProcSpillByWholeProcesses(t *testing.T) {
	t.Parallel()
	b := node("b", 16, 0)
	b.HeldSlots = 12
	nodes := []placement.Node{node("a", 4, 0), b}
	snap := placement.Snapshot{Nodes: nodes, Links: fullMesh(nodes, 0.1, 1000, 1000)}
	for _, policy := range []string{"netload", "sequential", "load"} {
		d, err := placement.Place(snap, placement.Request{N: 3, CPUsPerProc: 4, Policy: policy, Seed: 1, Oversubscribe: true, Force: true})
		if err != nil || d.Wait {
			t.Fatalf("%s: %s (wait %v %q, err %v)", policy, hostsString(d), d.Wait, d.WaitReason, err)
		}
		got := map[string]int{}
		for _, h := range d.Hosts {
			got[h.Node] = h.NP
		}
		if got["a"] != 1 || got["b"] != 2 {
			t.Errorf("%s: 3 processes of 4 CPUs on a (4 idle cores) and b (16 cores, 12 held): %s, want a:1 b:2", policy, hostsString(d))
		}
	}
}
