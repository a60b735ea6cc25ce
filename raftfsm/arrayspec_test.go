package raftfsm

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestArrayTasksShareOneSpec: an array of 100 tasks of a 60 KiB spec is one spec in the snapshot
// and, once restored, one copy in memory; the state restores equal, to the same bytes.
func TestArrayTasksShareOneSpec(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tasks := make([]int, 100)
	for i := range tasks {
		tasks[i] = i
	}
	id := h.ok(CmdSubmitJob, SubmitJob{RequestID: "sweep", Owner: "alice", Spec: JobSpec{Cmd: []string{"./sweep"}, NP: 1,
		Env: bigEnv(60 << 10), Array: &ArraySpec{Tasks: tasks}}}).JobID
	h.ok(CmdKillJob, KillJob{ID: id + 7, User: "alice"})
	snap := snapshotBytes(t, h.f)
	if n := len(snap); n > 100<<10 {
		t.Fatalf("snapshot of one array of 100 tasks of a 60 KiB spec is %d bytes, want under 100 KiB", n)
	}
	f := New()
	if err := f.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshotBytes(t, f), snap) || !reflect.DeepEqual(f.State(), h.f.State()) {
		t.Fatal("the restored state differs")
	}
	f.View(func(s *State) {
		first := unsafe.StringData(s.Jobs[id].Spec.Env[0])
		for _, j := range s.Jobs {
			if unsafe.StringData(j.Spec.Env[0]) != first {
				t.Fatalf("task %d holds its own copy of the array's environment after a restore", j.ID)
			}
		}
	})
}

// TestSnapshotBeforeSharedSpecsRestores: a snapshot written before tasks shared their spec (every
// task's spec in full) restores, and is written again with the tasks sharing it.
func TestSnapshotBeforeSharedSpecsRestores(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile("testdata/snapshot-v1-before-shared-specs.json")
	if err != nil {
		t.Fatal(err)
	}
	f := New()
	if err := f.Restore(io.NopCloser(bytes.NewReader(old))); err != nil {
		t.Fatalf("restore a snapshot of before shared specs: %v", err)
	}
	st := f.State()
	if len(st.Jobs) != 5 || st.Jobs[4].Spec.Env[1] != st.Jobs[1].Spec.Env[1] || st.Jobs[4].ArrayJobID != 1 {
		t.Fatalf("restored jobs: %d, task 4 %+v", len(st.Jobs), st.Jobs[4])
	}
	now := snapshotBytes(t, f)
	if c := bytes.Count(now, []byte(`"spec_of":1`)); c != 3 || len(now) >= len(old) {
		t.Fatalf("rewritten snapshot: %d tasks share the first's spec (want 3), %d bytes (was %d)", c, len(now), len(old))
	}
	g := New()
	if err := g.Restore(io.NopCloser(bytes.NewReader(now))); err != nil || !reflect.DeepEqual(g.State(), st) {
		t.Fatalf("restore of the rewritten snapshot: %v, equal %v", err, reflect.DeepEqual(g.State(), st))
	}
	// spec_of names only the first task of the job's own array, and never goes with a spec.
	for _, bad := range []struct{ from, to, want string }{
		{`"spec_of":1`, `"spec_of":2`, "spec_of 2 does not name the first task"},
		{`"array_task_id":1,"array_limit":2,"spec_of":1`, `"array_task_id":1,"array_limit":2,"spec_of":1,"spec":{"cmd":["x"],"np":1,"oversubscribe":false,"max_attempts":3}`, "has a spec and spec_of 1"},
	} {
		b := bytes.Replace(now, []byte(bad.from), []byte(bad.to), 1)
		if bytes.Equal(b, now) {
			t.Fatalf("edit %q not applied", bad.from)
		}
		if _, err := CheckSnapshot(b); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("snapshot with %s: %v, want %q", bad.to, err, bad.want)
		}
	}
}

// bigEnv is an environment of about n bytes, as a user who wants to bloat the state sends
// (each variable at most 4000 bytes, under the bound on one).
func bigEnv(n int) []string {
	var env []string
	for i := 0; n > 0; i++ {
		env = append(env, fmt.Sprintf("PAD%d=%s", i, strings.Repeat("x", min(n, 4000))))
		n -= 4000
	}
	return env
}
