package raftfsm

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// A shared copy stays as it was taken whatever the FSM applies after:
// no command changes a job, or the history, in place. Over random logs,
// each command is applied after taking a shared copy, whose encoding
// must not change.
func TestProperty_SharedCopyNeverChanges(t *testing.T) {
	t.Parallel()
	changed := 0
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 47))
		ops := rand.New(rand.NewPCG(seed, 48))
		h := newHarness(t)
		h.ok(CmdSetLimits, SetLimits{Limits: Limits{FinishedJobs: 3}}) // prunes into the history often
		nextReq := 0
		for i := range 600 {
			typ, body := randomCommand(r, h.f.State(), &nextReq)
			if i%16 == 15 {
				typ, body = randomOpsCommand(ops)
			}
			shared := h.f.Shared()
			before, err := shared.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			was := stateBytes(t, h.f)
			h.do(typ, body)
			if !bytes.Equal(was, stateBytes(t, h.f)) {
				changed++
			}
			after, err := shared.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("seed %d step %d: %s changed a shared copy taken before it", seed, i, typ)
			}
		}
	}
	if changed < 1000 {
		t.Errorf("only %d commands changed the state", changed)
	}
}

// TestSharedCopyHoldsEverything: a shared copy encodes as the state it
// was taken of, every part of it set: a part Shared forgets (as the
// partitions once were) reads as empty to the leader round that takes it.
func TestSharedCopyHoldsEverything(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok(CmdSetLimits, SetLimits{Limits: Limits{FinishedJobs: 3}})
	h.ok(CmdSetPartition, SetPartition{User: RootUser, Partition: Partition{Name: "p", Nodes: []string{"a"}}})
	h.ok(CmdDrainNode, DrainNode{Node: "b"})
	h.ok(CmdSetSwitches, SetSwitches{Switches: map[string]string{"a": "sw1"}})
	id := h.submit("s", 4)
	h.launch(id, 1, "a", "b")
	want, err := h.f.State().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.f.Shared().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("a shared copy encodes as\n%s\nthe state as\n%s", got, want)
	}
}
