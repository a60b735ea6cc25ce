package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// The progress marks of elastic attempts (shouldCommit's rate limit) go with their attempt:
// the job node runs pruneProgressMarks with its own pruning, and what is left is exactly the
// live attempts' marks.
func TestPruneProgressMarksKeepsLiveAttempts(t *testing.T) {
	t.Parallel()
	f := raftfsm.New()
	var index uint64
	apply := func(typ string, body any) raftfsm.Result {
		t.Helper()
		b, err := raftfsm.Encode(typ, time.Unix(1700000000, 0), body)
		if err != nil {
			t.Fatal(err)
		}
		index++
		res := f.Apply(&raft.Log{Index: index, Data: b}).(raftfsm.Result)
		if res.Err != nil {
			t.Fatalf("%s: %v", typ, res.Err)
		}
		return res
	}
	a := &Agent{fsm: f}
	live := map[jobKey]bool{}
	for i := 1; i <= 20; i++ {
		id := apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: fmt.Sprint(i), Owner: "alice",
			Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}).JobID
		apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", Procs: 1}}})
		apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: "n0"})
		apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1})
		k := jobKey{Job: id, Attempt: 1}
		if !a.shouldCommit(k, 1, 0) {
			t.Fatalf("first report of %v not committed", k)
		}
		if i%5 == 0 {
			live[k] = true
			continue
		}
		code := 0
		apply(raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: 1, ExitCode: &code})
	}
	a.pruneProgressMarks()
	if got := a.BookkeepingSizes()["reported"]; got != len(live) {
		t.Fatalf("reported holds %d marks after pruning, want %d (the live attempts)", got, len(live))
	}
	for k := range live {
		if _, ok := a.jobs.el.reported[k]; !ok {
			t.Errorf("live attempt %v lost its progress mark", k)
		}
	}
}
