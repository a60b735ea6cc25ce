package leader

import (
	"math"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestExcludeFailedAvoidsLostAndSilentNodes(t *testing.T) {
	t.Parallel()
	snap := placement.Snapshot{Nodes: []placement.Node{{Name: "a", Alive: true}, {Name: "b", Alive: true}, {Name: "c", Alive: true}}}
	alive := func(s placement.Snapshot) (out []string) {
		for _, n := range s.Nodes {
			if n.Alive {
				out = append(out, n.Name)
			}
		}
		return out
	}
	hosts := []raftfsm.Host{{Node: "a", NP: 1}, {Node: "b", NP: 1}}
	cases := map[string]struct {
		att  raftfsm.Attempt
		want []string
	}{
		"lost under a running attempt": {raftfsm.Attempt{N: 1, State: raftfsm.StateFailed, Hosts: hosts, Lost: []string{"b"}, StartedAt: at(1)}, []string{"a", "c"}},
		"never reserved":               {raftfsm.Attempt{N: 1, State: raftfsm.StateFailed, Hosts: hosts, Acks: []string{"a"}}, []string{"a", "c"}},
		"program failed: keep all":     {raftfsm.Attempt{N: 1, State: raftfsm.StateDone, Hosts: hosts, StartedAt: at(1)}, []string{"a", "b", "c"}},
	}
	for name, tc := range cases {
		got := alive(excludeFailed(snap, &raftfsm.Job{Attempts: []raftfsm.Attempt{tc.att}}))
		if len(got) != len(tc.want) {
			t.Errorf("%s: alive %v, want %v", name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: alive %v, want %v", name, got, tc.want)
			}
		}
	}
	if !snap.Nodes[1].Alive {
		t.Fatal("excludeFailed changed its input")
	}
}

func at(s int64) time.Time { return time.Unix(s, 0) }

func TestWaitReasonStale(t *testing.T) {
	t.Parallel()
	over := "cluster overloaded: all 3 candidate nodes are above 1.00 load per core (least: n0 at 5.00); wait or force"
	over2 := "cluster overloaded: all 3 candidate nodes are above 1.00 load per core (least: n1 at 4.90); wait or force"
	slots := "not enough free slots: need 4, the 3 usable nodes have 0 (oversubscription off)"
	for _, tc := range []struct {
		old   string
		since int64
		now   string
		at    int64
		want  bool
	}{
		{"", 0, over, 100, true},       // first reason: at once
		{over, 100, over, 101, false},  // unchanged: never
		{over, 100, over, 1000, false}, // unchanged, however old
		{over, 100, over2, 110, false}, // only the figures changed, recently
		{over, 100, over2, 130, true},  // figures changed, waitRefresh later
		{over, 100, slots, 101, true},  // another kind of reason: at once
		{slots, 100, "", 101, true},    // cleared: at once
	} {
		if got := waitReasonStale(tc.old, at(tc.since), tc.now, at(tc.at)); got != tc.want {
			t.Errorf("waitReasonStale(%q at %d, %q at %d) = %v, want %v", tc.old, tc.since, tc.now, tc.at, got, tc.want)
		}
	}
}

// The wiring of elastic jobs on a busy cluster: busy nodes reach the decision layer, and
// --force from the job's spec with them.
func TestElasticInputBusyNodesAndForce(t *testing.T) {
	t.Parallel()
	busy := func(name string) placement.Node {
		return placement.Node{Name: name, Alive: true, Cores: 8, Load: nodestate.Means{M1: 40}}
	}
	snap := placement.Snapshot{Nodes: []placement.Node{
		{Name: "a", Alive: true, Cores: 8}, busy("b"), busy("c"), {Name: "d", Alive: true, Cores: 8}, busy("e"),
	}}
	att := &raftfsm.Attempt{N: 1, State: raftfsm.StateRunning, Hosts: []raftfsm.Host{{Node: "a", NP: 1}}, StartedAt: at(1)}
	j := &raftfsm.Job{Spec: raftfsm.JobSpec{NP: 1, PPN: 1, Force: true, Elastic: &raftfsm.ElasticSpec{MinNP: 1, MaxNP: 5, Iterations: 100, Deadline: time.Hour}},
		Elastic: &raftfsm.ElasticStatus{TargetNP: 1}, Attempt: 1, Attempts: []raftfsm.Attempt{*att}, State: raftfsm.StateRunning}
	in := ElasticInput(j, att, at(100), snap)
	if in.Free != 1 || in.Busy != 3 || !in.Force {
		t.Fatalf("free %d busy %d force %v, want 1, 3, true", in.Free, in.Busy, in.Force)
	}
	j.Elastic.TargetNP = 4
	j.Attempts, j.Attempt = nil, 0
	if np, _ := elasticPlacement(snap, j); np != 4 {
		t.Fatalf("forced elastic job placed on %d processes, want its target 4", np)
	}
	j.Spec.Force = false
	if np, _ := elasticPlacement(snap, j); np != 2 {
		t.Fatalf("elastic job placed on %d processes, want the 2 free nodes", np)
	}
}

// An array placed in one round fills the free cores of every node, and
// then oversubscribes evenly: the tasks account for the slots the tasks
// before them took, so none piles onto the least loaded node while the
// others are no more oversubscribed than it.
func TestSchedule_ArrayUsesEveryNodeBeforeOversubscribingOne(t *testing.T) {
	t.Parallel()
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}
	w := newWorld(t, names...)
	free, freeOn := 0, map[string]int{} // Eq. 3's free cores: a node with any load has one core fewer
	for i := range w.nodes {
		w.nodes[i].Attrs.Cores, w.nodes[i].Attrs.Threads = 2, 2
		l := 0.02 * float64(i%3)
		w.nodes[i].Attrs.Load = nodestate.Means{Now: l, M1: l, M5: l, M15: l}
		freeOn[names[i]] = 2 - int(math.Ceil(l))
		free += freeOn[names[i]]
	}
	tasks := make([]int, 100)
	for i := range tasks {
		tasks[i] = i
	}
	submit(w, "sweep", raftfsm.JobSpec{NP: 1, MPI: "none", Oversubscribe: true, Array: &raftfsm.ArraySpec{Tasks: tasks}})
	per := map[string]int{}
	placed := 0
	for _, c := range w.round().Commands {
		p, ok := c.Body.(raftfsm.PlaceJob)
		if !ok {
			continue
		}
		placed++
		for _, h := range p.Hosts {
			per[h.Node] += h.NP
			if placed <= free && p.Degraded {
				t.Errorf("task %d oversubscribed %s while the cluster had %d free cores", placed, h.Node, free-placed+1)
			}
		}
	}
	if placed != 100 {
		t.Fatalf("placed %d of 100 tasks in one round", placed)
	}
	lo, hi := 100, -100
	for _, n := range names {
		over := per[n] - freeOn[n]
		lo, hi = min(lo, over), max(hi, over)
	}
	if hi-lo > 1 {
		t.Fatalf("tasks per node %v: %d..%d beyond each node's free cores, want every node within one task of the others", per, lo, hi)
	}
}
