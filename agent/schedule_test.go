package agent

import (
	"testing"
	"time"

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
	hosts := []raftfsm.Host{{Node: "a", Procs: 1}, {Node: "b", Procs: 1}}
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
