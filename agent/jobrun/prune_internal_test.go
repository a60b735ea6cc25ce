package jobrun

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// The node's per-job maps stay bounded by the live jobs over thousands of jobs. This drives
// the pruning path directly, not through a cluster (thousands of real launches are too slow on
// a shared test machine): 3000 jobs go through submit, place, ack, start and finish in an FSM
// by raft commands, the node's bookkeeping gets the entries its reconciler and exec handler
// make for each, and pruneBookkeeping runs every 100 jobs, as the reconciler runs it every few
// seconds, and runs the agent's own pruning (Deps.Prune) each time. Every 500th job is left running and must keep its
// entries; the rest are purged at the end.
func TestPruneKeepsJobMapsBoundedByLiveJobs(t *testing.T) {
	t.Parallel()
	f := raftfsm.New()
	apply := applier(t, f)
	prunes := 0
	a := testNode(t, f, func() { prunes++ })
	const jobs, keepEvery, pruneEvery = 3000, 500, 100
	var live, finished []uint64
	peak := 0
	for i := 1; i <= jobs; i++ {
		id := apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: fmt.Sprint(i), Owner: "alice",
			Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}).JobID
		apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}})
		k := Key{Job: id, Attempt: 1}
		a.mu.Lock()
		a.acking[k] = time.Now() // reserve
		a.mu.Unlock()
		if err := a.procs.fence(k); err != nil {
			t.Fatal(err)
		}
		apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: "n0"})
		apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
		a.markLaunched(k)
		a.mu.Lock()
		a.signalled[k] = time.Now() // signalResize's record (it would scan /proc)
		a.mu.Unlock()
		if i%keepEvery == 0 {
			live = append(live, id)
		} else {
			code := 0
			apply(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: 1, ExitCode: &code})
			finished = append(finished, id)
		}
		if i%pruneEvery == 0 {
			a.pruneBookkeeping()
			for name, n := range a.BookkeepingSizes() {
				peak = max(peak, n)
				if n > len(live) {
					t.Fatalf("after %d jobs, %d live: %s holds %d entries", i, len(live), name, n)
				}
			}
		}
	}
	for len(finished) > 0 { // purge_jobs takes at most 512 IDs
		n := min(len(finished), 512)
		apply(raftfsm.CmdPurgeJobs, raftfsm.PurgeJobs{IDs: finished[:n]})
		finished = finished[n:]
	}
	a.pruneBookkeeping()
	want := map[string]int{"launched": len(live), "acking": len(live), "seen": len(live),
		"signalled": len(live), "ompi_dirs": 0}
	got := a.BookkeepingSizes()
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s holds %d entries after %d jobs, want %d (the live set)", name, got[name], jobs, n)
		}
	}
	if want := jobs/pruneEvery + 1; prunes != want {
		t.Errorf("the agent's own pruning ran %d times, want %d (once per pruning)", prunes, want)
	}
	for _, id := range live {
		if !a.launched[Key{Job: id, Attempt: 1}] {
			t.Errorf("live job %d lost its launched mark: the reconciler would launch it again", id)
		}
	}
	t.Logf("%d jobs, %d live: largest map held %d entries", jobs, len(live), peak)
}
