package raftfsm

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A batch is its commands applied one by one, each as an entry of its own
// at the batch's time and index: the same state and the same result for
// each command, over random logs whose commands fit the state or not. With
// StopAtRefusal the batch ends at the first refusal, as a proposer that
// stops there would.
func TestProperty_BatchIsItsCommandsInOrder(t *testing.T) {
	t.Parallel()
	applied, stopped := 0, 0
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 46))
		one, batched := New(), New()
		batched.View(func(s *State) { s.index() }) // kept from the start (checkIndex)
		nextReq := 0
		for idx := uint64(1); idx <= 150; idx++ {
			at := t0.Add(time.Duration(idx) * time.Second)
			stop := r.IntN(2) == 0
			var b Batch
			var singles [][]byte
			for range 1 + r.IntN(8) {
				typ, body := randomCommand(r, one.State(), &nextReq)
				it, err := NewBatchItem(typ, body)
				if err != nil {
					t.Fatal(err)
				}
				b.Commands = append(b.Commands, it)
				data, err := Encode(typ, at, body)
				if err != nil {
					t.Fatal(err)
				}
				singles = append(singles, data)
			}
			var want []Result
			for _, data := range singles {
				res := one.Apply(&raft.Log{Index: idx, Data: data}).(Result)
				want = append(want, res)
				if res.Err != nil && stop {
					stopped++
					break
				}
			}
			b.StopAtRefusal = stop
			data, err := Encode(CmdBatch, at, b)
			if err != nil {
				t.Fatal(err)
			}
			got := batched.Apply(&raft.Log{Index: idx, Data: data}).(Result)
			if got.Err != nil {
				t.Fatalf("seed %d entry %d: batch refused: %v", seed, idx, got.Err)
			}
			if len(got.Results) != len(want) {
				t.Fatalf("seed %d entry %d: batch applied %d commands, one by one %d", seed, idx, len(got.Results), len(want))
			}
			for i, w := range want {
				g := got.Results[i]
				if Code(g.Err) != Code(w.Err) || g.JobID != w.JobID || g.Attempt != w.Attempt || g.Noop != w.Noop || g.Index != idx {
					t.Fatalf("seed %d entry %d command %d (%s): batched %+v, alone %+v", seed, idx, i, b.Commands[i].Type, g, w)
				}
				if w.Err == nil {
					applied++
				}
			}
			if !bytes.Equal(stateBytes(t, batched), stateBytes(t, one)) {
				t.Fatalf("seed %d entry %d: the batch left another state than its commands one by one", seed, idx)
			}
			checkInvariants(t, batched.State())
			checkIndex(t, batched)
		}
	}
	if applied < 200 || stopped < 20 {
		t.Errorf("the generator reached too little: %d commands applied, %d batches stopped at a refusal", applied, stopped)
	}
	t.Logf("%d commands applied in batches, %d batches stopped at a refusal", applied, stopped)
}

// A batch that cannot be applied as a whole changes nothing.
func TestBatchRefusedWhole(t *testing.T) {
	t.Parallel()
	long := Batch{}
	for range MaxBatch + 1 {
		it, err := NewBatchItem(CmdSubmitJob, SubmitJob{RequestID: "r", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1}})
		if err != nil {
			t.Fatal(err)
		}
		long.Commands = append(long.Commands, it)
	}
	for name, b := range map[string]Batch{
		"empty":    {},
		"too long": long,
		"nested":   {Commands: []BatchItem{{Type: CmdBatch, Body: []byte(`{"commands":[]}`)}}},
		"unknown":  {Commands: []BatchItem{{Type: "drop_tables", Body: []byte(`{}`)}}},
	} {
		h := newHarness(t)
		before := stateBytes(t, h.f)
		res := h.do(CmdBatch, b)
		if res.Err == nil {
			t.Errorf("%s batch accepted", name)
		}
		if len(res.Results) != 0 || !bytes.Equal(before, stateBytes(t, h.f)) {
			t.Errorf("%s batch applied something", name)
		}
	}
	if _, err := NewBatchItem(CmdBatch, Batch{}); err == nil {
		t.Error("NewBatchItem made a batch of a batch")
	}
}
