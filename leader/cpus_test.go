package leader

import (
	"testing"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestSchedule_CPUsPerRankTakeCores: three idle nodes of 4 cores, and jobs of 2 ranks of 4 CPUs
// each (--cpus-per-rank 4) without oversubscription. A rank of 4 CPUs takes a whole node, so
// the first job gets one rank on each of two nodes, the second finds 4 free cores where it
// needs 8 and waits, and a third job placed in the next round sees the cores the running one
// holds in raft. Counted as one core per rank, both jobs went on one node each with 2 cores
// busy, and the node ran 8 CPUs of work on 4.
func TestSchedule_CPUsPerRankTakeCores(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2", "n3")
	wide := raftfsm.JobSpec{NP: 2, CPUsPerRank: 4, MPI: "none"}
	submit(w, "a", wide)
	submit(w, "b", wide)
	cmds, _ := Schedule(w.view(), JobsBook{})
	wantCommands(t, cmds, []string{`place_job {"id":1,"attempt":1,"hosts":[{"node":"n`, `set_wait_reason {"id":2,"reason":"not enough free slots: need 2, the 3 usable nodes have 1`})
	placed := cmds[0].Body.(raftfsm.PlaceJob)
	if len(placed.Hosts) != 2 || placed.Hosts[0].NP != 1 || placed.Hosts[1].NP != 1 {
		t.Fatalf("job 1 placed on %+v: want one rank of 4 CPUs on each of two 4-core nodes", placed.Hosts)
	}
	for _, c := range cmds {
		w.apply(c.Type, c.Body)
	}
	// Next round: the held cores come from raft now.
	cmds, _ = Schedule(w.view(), JobsBook{})
	for _, c := range cmds {
		if c.Type == raftfsm.CmdPlaceJob {
			t.Fatalf("job 2 placed while job 1's ranks hold 8 of the 12 cores: %+v", c.Body)
		}
	}
}
