package raftnode

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func submitLog(t *testing.T, i uint64) *raft.Log {
	t.Helper()
	b, err := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Unix(1700000000, 0), raftfsm.SubmitJob{
		RequestID: fmt.Sprint("r", i), Owner: "alice", Spec: raftfsm.JobSpec{Cmd: []string{"/bin/true"}, NP: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: b}
}

func bytesOf(t *testing.T, f *raftfsm.FSM) []byte {
	t.Helper()
	b, err := f.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A client that followed entries 1..5 becomes a server: raft replays 1..7
// to it. The replay below the floor is skipped (applied twice, the jobs
// would be submitted twice), the rest applied: the result is the state of
// a node that applied 1..7 once. Snapshots wait for raft to pass the
// floor, and a snapshot at or below it never takes the state back.
func TestFloorFSM_SkipsTheFollowedPrefix(t *testing.T) {
	t.Parallel()
	want := raftfsm.New()
	followed := raftfsm.New()
	for i := uint64(1); i <= 7; i++ {
		want.Apply(submitLog(t, i))
		if i <= 5 {
			followed.Apply(submitLog(t, i))
		}
	}
	atFive := bytesOf(t, followed)
	var fed []uint64 // what the replica feed hears: only what this FSM applied
	f := &floorFSM{next: &notifyingFSM{FSM: followed, onApply: func(i, _ uint64, _ []byte) { fed = append(fed, i) }}, floor: 5}

	// A snapshot raft installs below the floor is ignored.
	old := raftfsm.New()
	for i := uint64(1); i <= 3; i++ {
		old.Apply(submitLog(t, i))
	}
	if err := f.Restore(io.NopCloser(bytes.NewReader(bytesOf(t, old)))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytesOf(t, followed), atFive) {
		t.Fatal("a snapshot below the floor took the followed state back")
	}
	for i := uint64(4); i <= 5; i++ {
		if _, err := f.Snapshot(); err == nil {
			t.Fatalf("snapshot allowed with raft at %d, below the floor 5", i-1)
		}
		f.Apply(submitLog(t, i))
	}
	if _, err := f.Snapshot(); err != nil {
		t.Fatalf("snapshot at the floor: %v", err)
	}
	for i := uint64(6); i <= 7; i++ {
		f.Apply(submitLog(t, i))
	}
	if got := bytesOf(t, followed); !bytes.Equal(got, bytesOf(t, want)) {
		t.Fatalf("state after the catch-up differs from applying 1..7 once:\n got %s\nwant %s", got, bytesOf(t, want))
	}

	if fmt.Sprint(fed) != "[6 7]" {
		t.Fatalf("applied entries %v, want [6 7]: raft's replay of the followed prefix reached the FSM", fed)
	}

	// Above the floor a snapshot restores as usual.
	newer := raftfsm.New()
	for i := uint64(1); i <= 9; i++ {
		newer.Apply(submitLog(t, i))
	}
	if err := f.Restore(io.NopCloser(bytes.NewReader(bytesOf(t, newer)))); err != nil {
		t.Fatal(err)
	}
	if followed.Index() != 9 {
		t.Fatalf("index %d after restoring a snapshot at 9", followed.Index())
	}
}
