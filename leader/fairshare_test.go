package leader

import (
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// Two users' arrays on a cluster of 8 slots: alice's, submitted first,
// fills it; once her tasks have run, bob's (no usage) go before the rest
// of hers, and from then on the two interleave by recent usage.
func TestSchedule_FairShareInterleavesUsers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "n1", "n2")
	for _, owner := range []string{"alice", "bob"} {
		res := w.do(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: owner, Owner: owner, Spec: raftfsm.JobSpec{
			Cmd: []string{"./sweep"}, NP: 1, MPI: "none", Array: &raftfsm.ArraySpec{Tasks: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}}})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	var batches [][]string
	for len(batches) < 3 {
		var batch []string
		for _, c := range w.round().Commands {
			if p, ok := c.Body.(raftfsm.PlaceJob); ok {
				batch = append(batch, w.st.Jobs[p.ID].Owner)
			}
		}
		w.nodesAct()
		w.round() // start what every node acknowledged
		w.advance(10 * time.Second)
		zero := 0
		for _, id := range w.st.SortedJobIDs() {
			if j := w.st.Jobs[id]; j.State == raftfsm.StateRunning {
				w.do(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: j.Attempt, ExitCode: &zero})
			}
		}
		batches = append(batches, batch)
	}
	count := func(b []string, who string) int {
		return len(slices.DeleteFunc(slices.Clone(b), func(s string) bool { return s != who }))
	}
	if count(batches[0], "alice") != 8 {
		t.Fatalf("first batch %v, want alice's first 8 tasks (nobody has usage: first come)", batches[0])
	}
	if count(batches[1], "bob") != 8 {
		t.Fatalf("second batch %v, want bob's 8: alice used the cluster, bob did not", batches[1])
	}
	if a, b := count(batches[2], "alice"), count(batches[2], "bob"); a != 4 || b != 4 {
		t.Fatalf("third batch %v, want alice's last 4 and bob's next 4", batches[2])
	}
}
