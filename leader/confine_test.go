package leader

import (
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// A job with a memory limit goes only to confining nodes with that much
// memory not held by other such jobs, and waits with the numbers when none
// has it.
func TestMemoryFit(t *testing.T) {
	t.Parallel()
	node := func(name string) placement.Node {
		return placement.Node{Name: name, Alive: true, Cores: 4, Threads: 4, MemTotal: 1 << 30}
	}
	snap := placement.Snapshot{Nodes: []placement.Node{node("a"), node("b"), node("c")}}
	confined := map[string]bool{"a": true, "b": true}
	held := map[string]uint64{"a": 768 << 20}
	job := func(sp raftfsm.JobSpec) *raftfsm.Job { return &raftfsm.Job{ID: 1, Spec: sp} }
	alive := func(s placement.Snapshot) (out []string) {
		for _, n := range s.Nodes {
			if n.Alive {
				out = append(out, n.Name)
			}
		}
		return out
	}

	got, why := memoryFit(snap, confined, held, job(raftfsm.JobSpec{NP: 1, MemPerNode: 512 << 20}))
	if why != "" || strings.Join(alive(got), ",") != "b" {
		t.Errorf("512M per node: nodes %v, wait %q; want only b (a has 256M free, c does not confine)", alive(got), why)
	}
	got, _ = memoryFit(snap, confined, held, job(raftfsm.JobSpec{NP: 4, MemPerRank: 128 << 20}))
	if a := got.Nodes[0]; !a.Alive || a.HeldSlots != 2 {
		t.Errorf("128M per rank on a with 256M free: alive %v, held slots %d; want 2 slots held of 4", a.Alive, a.HeldSlots)
	}
	_, why = memoryFit(snap, confined, held, job(raftfsm.JobSpec{NP: 1, MemPerNode: 2 << 30}))
	for _, want := range []string{"waiting for memory", "2048M per node", "a 256M free", "b 1024M free", "c"} {
		if !strings.Contains(why, want) {
			t.Errorf("wait reason %q lacks %q", why, want)
		}
	}
	heldAfter := map[string]uint64{}
	holdMemory(heldAfter, &raftfsm.JobSpec{MemPerRank: 10}, []raftfsm.Host{{Node: "a", NP: 3}})
	if heldAfter["a"] != 30 {
		t.Errorf("held after a placement of 3 ranks at 10 bytes: %d, want 30", heldAfter["a"])
	}
}
