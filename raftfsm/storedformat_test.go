package raftfsm

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// storedPlaceJob is a place_job entry byte for byte as raft logs hold it:
// an attempt's hosts are {"node", "procs"}. The bytes are fixed here, not
// produced by Encode, so that a change of Host's keys or shape fails this
// test instead of rewriting what it compares against.
const storedPlaceJob = `{"v":1,"type":"place_job","at":"2026-11-22T11:00:00Z","body":{"id":1,"attempt":1,"hosts":[{"node":"n1","procs":3},{"node":"n2","procs":1}],"head":"n1","degraded":true,"degraded_reason":"n2 oversubscribed by 1"}}`

// TestPlaceJobStoredFormat: a place_job from a stored log decodes into
// the hosts it names, applies, and encodes back to the same bytes.
func TestPlaceJobStoredFormat(t *testing.T) {
	t.Parallel()
	c, err := Decode([]byte(storedPlaceJob))
	if err != nil {
		t.Fatalf("decode the stored entry: %v", err)
	}
	var b PlaceJob
	if err := strictUnmarshal(c.Body, &b); err != nil {
		t.Fatalf("decode the stored body: %v", err)
	}
	want := PlaceJob{ID: 1, Attempt: 1, Hosts: []Host{{Node: "n1", NP: 3}, {Node: "n2", NP: 1}},
		Head: "n1", Degraded: true, DegradedReason: "n2 oversubscribed by 1"}
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("stored body decoded to %+v, want %+v", b, want)
	}
	again, err := Encode(c.Type, c.At, b)
	if err != nil || !bytes.Equal(again, []byte(storedPlaceJob)) {
		t.Fatalf("re-encoded: %v\n got %s\nwant %s", err, again, storedPlaceJob)
	}

	h := newHarness(t)
	id := h.submit("r1", 4)
	h.raw(&raft.Log{Index: uint64(len(h.log) + 1), Term: 1, Type: raft.LogCommand, Data: []byte(storedPlaceJob)})
	j := h.wantState(id, StateLaunching)
	a := j.Attempts[len(j.Attempts)-1]
	if !reflect.DeepEqual(a.Hosts, want.Hosts) || a.NP() != 4 {
		t.Fatalf("attempt after the stored place_job: hosts %+v, np %d", a.Hosts, a.NP())
	}
}
