package raftfsm

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestDeterminism_SameLogSameSnapshot(t *testing.T) {
	t.Parallel()
	h := scriptedTrace(t)
	want := snapshotBytes(t, h.f)
	for run := 0; run < 3; run++ {
		f := New()
		for _, l := range h.log {
			f.Apply(l)
		}
		if got := snapshotBytes(t, f); !bytes.Equal(got, want) {
			t.Fatalf("run %d: snapshot differs\n got %s\nwant %s", run, got, want)
		}
	}
}

func TestSnapshotRestore_SameStateSameBytes(t *testing.T) {
	t.Parallel()
	h := scriptedTrace(t)
	snap := snapshotBytes(t, h.f)

	f := New()
	f.Apply(rawLog(1, "garbage")) // Restore must replace everything, index included
	if err := f.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if got := snapshotBytes(t, f); !bytes.Equal(got, snap) {
		t.Fatalf("restored snapshot differs\n got %s\nwant %s", got, snap)
	}
	if !reflect.DeepEqual(f.State(), h.f.State()) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", f.State(), h.f.State())
	}
	if f.Index() != h.f.Index() {
		t.Fatalf("index %d, want %d", f.Index(), h.f.Index())
	}
	// Both FSMs go on identically after the restore.
	next := h.entry(CmdSubmitJob, SubmitJob{RequestID: "after", Owner: "alice", Spec: JobSpec{Cmd: []string{"x"}, NP: 1}})
	r1, r2 := h.f.Apply(next).(Result), f.Apply(next).(Result)
	if r1.Err != nil || r1.JobID != r2.JobID || !bytes.Equal(snapshotBytes(t, h.f), snapshotBytes(t, f)) {
		t.Fatalf("diverged after restore: %+v vs %+v", r1, r2)
	}
	// Dedup survives a restore: the index of request IDs is rebuilt from the jobs.
	dup := h.entry(CmdSubmitJob, SubmitJob{RequestID: "req-2", Owner: "bob", Spec: JobSpec{Cmd: []string{"x"}, NP: 1}})
	if r := f.Apply(dup).(Result); r.Err != nil || r.JobID != 2 || !r.Noop {
		t.Fatalf("dedup after restore: %+v", r)
	}
}

func TestSnapshot_IsolatedFromLaterApplies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("r", 4)
	before := snapshotBytes(t, h.f)
	snap, err := h.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	h.launch(id, 1, "a", "b")
	h.ok(CmdKillJob, KillJob{ID: id, User: "alice"})
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if !bytes.Equal(sink.Bytes(), before) {
		t.Fatalf("snapshot saw later applies:\n got %s\nwant %s", sink.Bytes(), before)
	}
}

func TestState_CopyIsDeep(t *testing.T) {
	t.Parallel()
	h := scriptedTrace(t)
	before := stateBytes(t, h.f)
	st := h.f.State()
	for _, j := range st.Jobs {
		j.State = StateQueued
		j.Spec.Cmd[0] = "rm"
		if j.Spec.Alpha != nil {
			*j.Spec.Alpha = 0
		}
		if len(j.Spec.Env) > 0 {
			j.Spec.Env[0] = "X=1"
		}
		for i := range j.Attempts {
			j.Attempts[i].Hosts[0].Node = "evil"
			if len(j.Attempts[i].Acks) > 0 {
				j.Attempts[i].Acks[0] = "evil"
			}
			if j.Attempts[i].ExitCode != nil {
				*j.Attempts[i].ExitCode = 99
			}
		}
		if j.ExitCode != nil {
			*j.ExitCode = 99
		}
	}
	for _, p := range st.Probes {
		p.Restarts = 1000
	}
	st.ProbeDuties.Rounds[0][0].From = "evil"
	st.Jobs[99] = &Job{ID: 99}
	if after := stateBytes(t, h.f); !bytes.Equal(before, after) {
		t.Fatalf("modifying State()'s copy changed the FSM")
	}
}

func TestRestore_BadSnapshotLeavesState(t *testing.T) {
	t.Parallel()
	h := scriptedTrace(t)
	good := snapshotBytes(t, h.f)
	bad := []string{
		``,
		`{}`,
		`{"v":2,"index":1,"state":{}}`,
		`{"v":1,"index":1}`,
		`{"v":1,"index":1,"state":{"next_job_id":0}}`,
		`{"v":1,"index":1,"state":{"next_job_id":2,"jobs":[{"id":5}]}}`,
		`{"v":1,"index":1,"state":{"next_job_id":9,"jobs":[{"id":5,"request_id":"a"},{"id":5,"request_id":"b"}]}}`,
		`{"v":1,"index":1,"state":{"next_job_id":9,"jobs":[{"id":5,"request_id":"a"},{"id":6,"request_id":"a"}]}}`,
		`{"v":1,"index":1,"state":{"next_job_id":9,"jobs":[{"id":5,"attempt":2}]}}`,
		`{"v":1,"index":1,"state":{"next_job_id":9,"jobs":[null]}}`,
		`{"v":1,"index":1,"state":{"next_job_id":9,"probes":[null]}}`,
		`{"v":1,"index":1,"state":{"next_job_id":1},"extra":1}`,
		string(good[:len(good)/2]),
	}
	for _, b := range bad {
		err := h.f.Restore(io.NopCloser(bytes.NewReader([]byte(b))))
		if !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("Restore(%.60q) = %v, want ErrBadSnapshot", b, err)
		}
		if got := snapshotBytes(t, h.f); !bytes.Equal(got, good) {
			t.Fatalf("a refused restore changed the state")
		}
	}
	if err := h.f.Restore(io.NopCloser(failingReader{})); err == nil {
		t.Errorf("read error not reported")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestPersist_CancelsOnWriteError(t *testing.T) {
	t.Parallel()
	snap, _ := New().Snapshot()
	sink := &brokenSink{}
	if err := snap.Persist(sink); err == nil || !sink.cancelled || sink.closed {
		t.Fatalf("err %v cancelled %v closed %v", err, sink.cancelled, sink.closed)
	}
}

type brokenSink struct{ memSink }

func (b *brokenSink) Write([]byte) (int, error) { return 0, errors.New("no space") }
