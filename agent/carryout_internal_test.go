package agent

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// queuedJobs is an FSM holding n queued one-process jobs, 1 to n.
func queuedJobs(t *testing.T, n int) *raftfsm.FSM {
	t.Helper()
	f := raftfsm.New()
	for i := 1; i <= n; i++ {
		b := submitCmd(t, fmt.Sprint("r", i), 1)
		if r := f.Apply(&raft.Log{Index: uint64(i), Data: b}).(raftfsm.Result); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	return f
}

func placeCmd(id uint64, procs int) leader.Command {
	return leader.Command{Type: raftfsm.CmdPlaceJob, Placement: true,
		Body: raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n1", NP: procs}}}}
}

// A round's commands go as one entry per run of a kind: the others as a
// batch where each stands alone, the placements as a batch that stops at
// the first refused (the placements after it counted it as committed).
// Each command raft applied is answered; the skipped ones are not.
func TestCarryOutBatchesRunsAndStopsPlacementsAtARefusal(t *testing.T) {
	t.Parallel()
	fa := &fsmApplier{t: t, fsm: queuedJobs(t, 3), release: make(chan struct{})}
	close(fa.release)
	l := &leading{log: slog.New(slog.DiscardHandler), clock: time.Now, apply: fa.apply}
	cmds := []leader.Command{
		{Type: raftfsm.CmdStartJob, Body: raftfsm.StartJob{ID: 3, Attempt: 1}}, // refused: not placed
		{Type: raftfsm.CmdSetWaitReason, Body: raftfsm.SetWaitReason{ID: 3, Reason: "not enough free slots"}},
		placeCmd(1, 1),
		placeCmd(2, 0), // refused: no processes
		placeCmd(3, 1), // decided counting job 2 as placed: skipped
	}
	var taken []string
	leader.CarryOut(&proposer{ctx: context.Background(), l: l, taken: func(c leader.Command, a leader.Answer) {
		taken = append(taken, fmt.Sprintf("%s %v", c.Type, a.Taken()))
	}}, cmds)
	want := []string{"start_job false", "set_wait_reason true", "place_job true", "place_job false"}
	if fmt.Sprint(taken) != fmt.Sprint(want) {
		t.Errorf("answers %q, want %q", taken, want)
	}
	if len(fa.writes) != 2 || fa.writes[0].Type != raftfsm.CmdBatch || fa.writes[1].Type != raftfsm.CmdBatch {
		t.Fatalf("wrote %d entries (%v), want two batches", len(fa.writes), fa.writes)
	}
	fa.fsm.View(func(s *raftfsm.State) {
		if got := [3]raftfsm.JobState{s.Jobs[1].State, s.Jobs[2].State, s.Jobs[3].State}; got != [3]raftfsm.JobState{
			raftfsm.StateLaunching, raftfsm.StateQueued, raftfsm.StateQueued} {
			t.Errorf("jobs are %v, want launching, queued, queued", got)
		}
		if s.Jobs[3].WaitReason == "" {
			t.Error("the wait reason beside the refused start was not recorded")
		}
	})
}

// A run longer than a batch goes in batches of MaxBatch; once one stops at
// a refused placement, the later batches of the round are not proposed.
func TestCarryOutSplitsLongRunsAndSkipsAfterARefusal(t *testing.T) {
	t.Parallel()
	n := raftfsm.MaxBatch + 10
	fa := &fsmApplier{t: t, fsm: queuedJobs(t, 2*n), release: make(chan struct{})}
	close(fa.release)
	l := &leading{log: slog.New(slog.DiscardHandler), clock: time.Now, apply: fa.apply}
	var cmds []leader.Command
	for id := 1; id <= n; id++ {
		cmds = append(cmds, placeCmd(uint64(id), 1))
	}
	placed := 0
	leader.CarryOut(&proposer{ctx: context.Background(), l: l, taken: func(c leader.Command, a leader.Answer) {
		if a.Taken() {
			placed++
		}
	}}, cmds)
	if placed != n || len(fa.writes) != 2 {
		t.Fatalf("%d placed in %d entries, want %d in 2", placed, len(fa.writes), n)
	}
	cmds = cmds[:0]
	for id := n + 1; id <= 2*n; id++ {
		procs := 1
		if id == n+5 {
			procs = 0 // refused
		}
		cmds = append(cmds, placeCmd(uint64(id), procs))
	}
	placed = 0
	leader.CarryOut(&proposer{ctx: context.Background(), l: l, taken: func(c leader.Command, a leader.Answer) {
		if a.Taken() {
			placed++
		}
	}}, cmds)
	if placed != 4 || len(fa.writes) != 3 {
		t.Fatalf("after a refusal: %d placed in %d more entries, want 4 in 1", placed, len(fa.writes)-2)
	}
}
