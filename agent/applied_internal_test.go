package agent

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// A write's answer waits for this node to apply the write's entry, and
// goes on as that entry is applied: awaitApplied has no timer to fall
// back on, so a wait that did not wake on the applied entry would run
// into the test's deadline.
func TestAwaitAppliedWakesOnTheEntry(t *testing.T) {
	t.Parallel()
	f := raftfsm.New()
	a := &applier{fsm: f}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.awaitApplied(ctx, 2)
	}()
	for i := uint64(1); i <= 2; i++ {
		b, err := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Unix(1700000000, 0), raftfsm.SubmitJob{
			RequestID: string(rune('a' + i)), Owner: "alice", Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}})
		if err != nil {
			t.Fatal(err)
		}
		f.Apply(&raft.Log{Index: i, Data: b})
	}
	<-done
	if ctx.Err() != nil {
		t.Fatal("awaitApplied returned only when its context ended, not when entry 2 was applied")
	}
	if f.Index() != 2 {
		t.Fatalf("index %d", f.Index())
	}
}
