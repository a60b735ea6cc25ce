package agent

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// fsmApplier commits commands to a real FSM, one raft index each, and
// records what it was given; until release is closed, the first write
// blocks (a write in flight).
type fsmApplier struct {
	t       *testing.T
	fsm     *raftfsm.FSM
	release chan struct{}
	mu      sync.Mutex
	writes  []raftfsm.Command
}

func (f *fsmApplier) apply(_ context.Context, cmd []byte) (api.ApplyResult, error) {
	c, err := raftfsm.Decode(cmd)
	if err != nil {
		f.t.Errorf("the batcher wrote an entry that does not decode: %v", err)
		return api.ApplyResult{}, err
	}
	f.mu.Lock()
	f.writes = append(f.writes, c)
	first := len(f.writes) == 1
	f.mu.Unlock()
	if first {
		<-f.release
	}
	r := f.fsm.Apply(&raft.Log{Index: f.fsm.Index() + 1, Data: cmd}).(raftfsm.Result)
	return applyResult(r, r.Index), nil
}

func submitCmd(t *testing.T, req string, np int) []byte {
	t.Helper()
	b, err := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Now(), raftfsm.SubmitJob{RequestID: req, Owner: "alice",
		Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: np}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A command proposed while none is in flight goes alone and at once; the
// commands proposed while it is in flight go together in the next entry,
// each checked on its own, and every caller gets its own answer.
func TestBatcherGroupsWhatComesWhileAWriteIsInFlight(t *testing.T) {
	t.Parallel()
	f := &fsmApplier{t: t, fsm: raftfsm.New(), release: make(chan struct{})}
	var wg sync.WaitGroup
	spawn := func(fn func()) bool {
		wg.Add(1)
		go func() { defer wg.Done(); fn() }()
		return true
	}
	b := newBatcher(context.Background(), f.apply, spawn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type answer struct {
		req string
		res api.ApplyResult
		err error
	}
	answers := make(chan answer, 16)
	propose := func(req string, np int) {
		go func() {
			res, err := b.Apply(ctx, submitCmd(t, req, np))
			answers <- answer{req, res, err}
		}()
	}
	propose("first", 1)
	queued := func(n int) {
		t.Helper()
		for ctx.Err() == nil {
			b.mu.Lock()
			q := len(b.queue)
			b.mu.Unlock()
			f.mu.Lock()
			w := len(f.writes)
			f.mu.Unlock()
			if q == n && w == 1 {
				return
			}
			time.Sleep(time.Millisecond) // the polling period of a condition
		}
		t.Fatalf("%d commands never queued behind the write in flight", n)
	}
	queued(0)
	const more = 5
	for i := range more {
		np := 1
		if i == 2 {
			np = 0 // refused: invalid
		}
		propose(fmt.Sprint("more-", i), np)
	}
	queued(more)
	close(f.release)
	got := map[string]answer{}
	for range more + 1 {
		a := <-answers
		got[a.req] = a
	}
	wg.Wait()
	if len(f.writes) != 2 {
		t.Fatalf("%d writes, want 2 (one alone, then one batch)", len(f.writes))
	}
	if f.writes[0].Type != raftfsm.CmdSubmitJob {
		t.Errorf("the first command went as %s, not alone", f.writes[0].Type)
	}
	if f.writes[1].Type != raftfsm.CmdBatch {
		t.Fatalf("the commands that waited went as %s, not as one batch", f.writes[1].Type)
	}
	ids := map[uint64]string{}
	for req, a := range got {
		if a.err != nil {
			t.Fatalf("%s: %v", req, a.err)
		}
		if req == "more-2" {
			if a.res.Code != "invalid" {
				t.Errorf("the invalid submit was answered %+v, want refused invalid", a.res)
			}
			continue
		}
		if a.res.Err != "" || a.res.JobID == 0 {
			t.Fatalf("%s answered %+v", req, a.res)
		}
		if other, dup := ids[a.res.JobID]; dup {
			t.Fatalf("%s and %s both answered job %d", req, other, a.res.JobID)
		}
		ids[a.res.JobID] = req
	}
	f.fsm.View(func(s *raftfsm.State) {
		for id, req := range ids {
			if j := s.Jobs[id]; j == nil || j.RequestID != req {
				t.Errorf("job %d is not %s's submit", id, req)
			}
		}
		if len(s.Jobs) != more {
			t.Errorf("%d jobs, want %d (the invalid one refused alone)", len(s.Jobs), more)
		}
	})
}

// A batcher of a stopping agent writes nothing and says so.
func TestBatcherRefusesWhileStopping(t *testing.T) {
	t.Parallel()
	f := &fsmApplier{t: t, fsm: raftfsm.New(), release: make(chan struct{})}
	b := newBatcher(context.Background(), f.apply, func(func()) bool { return false })
	if _, err := b.Apply(context.Background(), submitCmd(t, "r", 1)); err == nil {
		t.Fatal("a stopping agent's batcher accepted a command")
	}
	if len(f.writes) != 0 || len(b.queue) != 0 {
		t.Errorf("a stopping agent's batcher wrote %d entries and kept %d commands", len(f.writes), len(b.queue))
	}
}
