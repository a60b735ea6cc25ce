package agent

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// The progress marks of elastic attempts (shouldCommit's rate limit) go with their attempt:
// the job node runs the progress reporter's prune with its own pruning, and what is left is
// exactly the live attempts' marks.
func TestPruneProgressMarksKeepsLiveAttempts(t *testing.T) {
	t.Parallel()
	// Twenty jobs run on n0 (IDs 1 to 20, in submit order); every fifth is still running.
	type command struct {
		typ  string
		body any
	}
	var cmds []command
	live := map[jobrun.Key]bool{}
	for id := uint64(1); id <= 20; id++ {
		cmds = append(cmds,
			command{raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: fmt.Sprint(id), Owner: "alice", Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}}},
			command{raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}}},
			command{raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: "n0"}},
			command{raftfsm.CmdStartJob, raftfsm.StartJob{ID: id, Attempt: 1}})
		if id%5 == 0 {
			live[jobrun.Key{Job: id, Attempt: 1}] = true
		} else {
			cmds = append(cmds, command{raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: id, Attempt: 1, ExitCode: new(int)}})
		}
	}
	f := raftfsm.New()
	for i, c := range cmds {
		b, err := raftfsm.Encode(c.typ, time.Unix(1700000000, 0), c.body)
		if err != nil {
			t.Fatal(err)
		}
		if res := f.Apply(&raft.Log{Index: uint64(i + 1), Data: b}).(raftfsm.Result); res.Err != nil {
			t.Fatalf("%s: %v", c.typ, res.Err)
		}
	}
	r := &progressReporter{now: time.Now, state: f, options: &elasticSettings{}}
	for id := uint64(1); id <= 20; id++ {
		if k := (jobrun.Key{Job: id, Attempt: 1}); !r.shouldCommit(k, 1, 0) {
			t.Fatalf("first report of %v not committed", k)
		}
	}
	r.prune()
	if got := r.size(); got != len(live) {
		t.Fatalf("reported holds %d marks after pruning, want %d (the live attempts)", got, len(live))
	}
	for k := range live {
		if _, ok := r.reported[k]; !ok {
			t.Errorf("live attempt %v lost its progress mark", k)
		}
	}
}

// A report committed in the background is settled before its attempt's
// outcome: settle returns only once the commit under way has returned,
// and at once for an attempt with none (or when its context ends).
func TestSettleWaitsForBackgroundProgress(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	committed := make(chan struct{}, 1)
	l := newLoops(slog.New(slog.DiscardHandler))
	defer func() { free(); l.cancel(); l.wait() }() // a failing test still lets the held commit end
	r := &progressReporter{log: l.log, now: time.Now, options: &elasticSettings{}, loops: l,
		apply: func(context.Context, []byte) (api.ApplyResult, error) {
			<-release
			committed <- struct{}{}
			return api.ApplyResult{}, nil
		}}
	k := jobrun.Key{Job: 7, Attempt: 1}
	if !r.report(t.Context(), k.Job, k.Attempt, 3, 0, nil) {
		t.Fatal("the first report was not committed")
	}
	// Another attempt has nothing under way: its settle returns at once.
	other := make(chan struct{})
	go func() { r.settle(t.Context(), jobrun.Key{Job: 8, Attempt: 1}); close(other) }()
	select {
	case <-other:
	case <-time.After(10 * time.Second):
		t.Fatal("settle of an attempt with nothing under way did not return")
	}
	// The attempt's own settle waits while the commit is held, until its
	// context ends...
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	start := time.Now()
	r.settle(short, k)
	cancel()
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Fatalf("settle returned after %v with a commit under way, want it to wait for its context's end", waited)
	}
	select {
	case <-committed:
		t.Fatal("committed before it was released")
	default:
	}
	// ...and returns once the commit has.
	done := make(chan struct{})
	go func() { r.settle(t.Context(), k); close(done) }()
	free()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("settle did not return after the commit")
	}
	select {
	case <-committed:
	default:
		t.Fatal("settle returned before the commit did")
	}
}
