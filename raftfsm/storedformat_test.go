package raftfsm

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// storedSubmitJob and storedPlaceJob are entries byte for byte as raft
// logs hold them: a spec's hostfile lines are {"host", "slots"} and its
// processing elements {"kind", "per_proc"}, an attempt's hosts {"node",
// "procs"}. The bytes are fixed here, not produced by Encode, so that a
// change of these types' keys or shape fails this test instead of
// rewriting what it compares against.
const storedSubmitJob = `{"v":1,"type":"submit_job","at":"2026-11-22T10:59:00Z","body":{"request_id":"r1","owner":"alice","spec":{"cmd":["./train"],"np":4,"hostfile":[{"host":"n1","slots":3},{"host":"n2","slots":0}],"oversubscribe":false,"pes":[{"kind":"gpu","per_proc":1}],"max_attempts":0}}}`

const storedPlaceJob = `{"v":1,"type":"place_job","at":"2026-11-22T11:00:00Z","body":{"id":1,"attempt":1,"hosts":[{"node":"n1","procs":3},{"node":"n2","procs":1}],"head":"n1","degraded":true,"degraded_reason":"n2 oversubscribed by 1"}}`

// TestStoredFormatDecodes: a submit_job and a place_job from a stored log
// decode into the hostfile, processing elements and hosts they name,
// encode back to the same bytes, and apply.
func TestStoredFormatDecodes(t *testing.T) {
	t.Parallel()
	spec := JobSpec{Cmd: []string{"./train"}, NP: 4, PEs: []PENeed{{Kind: "gpu", PerProc: 1}},
		Hostfile: []HostSlots{{Host: "n1", Slots: 3}, {Host: "n2", Slots: 0}}}
	place := PlaceJob{ID: 1, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 3}, {Node: "n2", NP: 1}},
		Head: "n1", Degraded: true, DegradedReason: "n2 oversubscribed by 1"}
	for _, tc := range []struct {
		stored string
		got    any
		want   any
	}{
		{storedSubmitJob, &SubmitJob{}, &SubmitJob{RequestID: "r1", Owner: "alice", Spec: spec}},
		{storedPlaceJob, &PlaceJob{}, &place},
	} {
		c, err := Decode([]byte(tc.stored))
		if err != nil {
			t.Fatalf("decode the stored entry: %v", err)
		}
		if err := strictUnmarshal(c.Body, tc.got); err != nil {
			t.Fatalf("decode the stored %s body: %v", c.Type, err)
		}
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Fatalf("stored %s body decoded to %+v, want %+v", c.Type, tc.got, tc.want)
		}
		again, err := Encode(c.Type, c.At, tc.got)
		if err != nil || !bytes.Equal(again, []byte(tc.stored)) {
			t.Fatalf("re-encoded %s: %v\n got %s\nwant %s", c.Type, err, again, tc.stored)
		}
	}

	h := newHarness(t)
	for _, stored := range []string{storedSubmitJob, storedPlaceJob} {
		if res := h.raw(&raft.Log{Index: uint64(len(h.log) + 1), Term: 1, Type: raft.LogCommand, Data: []byte(stored)}); res.Err != nil {
			t.Fatalf("apply the stored entry: %v", res.Err)
		}
	}
	j := h.wantState(1, StateLaunching)
	a := j.Attempts[len(j.Attempts)-1]
	if !reflect.DeepEqual(j.Spec.Hostfile, spec.Hostfile) || !reflect.DeepEqual(j.Spec.PEs, spec.PEs) ||
		!reflect.DeepEqual(a.Hosts, place.Hosts) || a.NP() != 4 {
		t.Fatalf("job after the stored entries: hostfile %+v, pes %+v, hosts %+v, np %d", j.Spec.Hostfile, j.Spec.PEs, a.Hosts, a.NP())
	}
}
