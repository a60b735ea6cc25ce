package raftfsm

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

func TestHistory_PurgeLeavesARecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("x", 2*MaxHistoryCmd)
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "r1", Owner: "alice", Spec: JobSpec{Cmd: []string{"./sim", long, "tail"}, Env: []string{"TOKEN=secret"}, NP: 2}})
	h.ok(CmdPlaceJob, PlaceJob{ID: 1, Attempt: 1, Hosts: []Host{{Node: "a", NP: 1}, {Node: "b", NP: 1}}})
	h.ok(CmdAckReservation, AckReservation{ID: 1, Attempt: 1, Node: "a"})
	h.ok(CmdAckReservation, AckReservation{ID: 1, Attempt: 1, Node: "b"})
	h.ok(CmdStartJob, StartJob{ID: 1, Attempt: 1})
	three := 3
	h.ok(CmdFinishAttempt, FinishAttempt{ID: 1, Attempt: 1, ExitCode: &three})
	job := h.f.State().Jobs[1].clone()
	h.ok(CmdSubmitJob, SubmitJob{RequestID: "r2", Owner: "bob", Spec: JobSpec{Cmd: []string{"sleep", "1d"}, NP: 1}})

	h.ok(CmdPurgeJobs, PurgeJobs{IDs: []uint64{2, 1}}) // job 2 is queued: it stays, without a record
	st := h.f.State()
	if len(st.History) != 1 {
		t.Fatalf("history %+v, want job 1's record only", st.History)
	}
	r := st.History[0]
	if r.ID != 1 || r.Owner != "alice" || r.State != StateFailed || r.ExitCode == nil || *r.ExitCode != 3 || r.NP != 2 ||
		strings.Join(r.Nodes, ",") != "a,b" || !r.SubmittedAt.Equal(job.SubmittedAt) || !r.StartedAt.Equal(job.StartedAt) ||
		!r.EndedAt.Equal(job.EndedAt) || r.Attempts != 1 || r.Usage != nil {
		t.Errorf("record %+v of job %+v", r, job)
	}
	if n := len(strings.Join(r.Cmd, "")); n > MaxHistoryCmd+len("…")*2 || r.Cmd[0] != "./sim" || !strings.HasSuffix(r.Cmd[1], "…") {
		t.Errorf("record cmd of %d bytes: %q..., want the command cut to %d", n, r.Cmd[0], MaxHistoryCmd)
	}
	b, _ := st.MarshalJSON()
	if bytes.Contains(b, []byte("secret")) {
		t.Error("the job's environment is in the state after the purge")
	}

	// The records survive a snapshot.
	g := New()
	if err := g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, h.f)))); err != nil {
		t.Fatal(err)
	}
	if len(g.State().History) != 1 || g.State().History[0].ID != 1 {
		t.Errorf("restored history %+v", g.State().History)
	}

	// purge_history drops the records that ended before its time, only those.
	if res := h.ok(CmdPurgeHistory, PurgeHistory{Before: r.EndedAt}); !res.Noop {
		t.Error("purge_history of records ending at the time itself changed the state")
	}
	h.ok(CmdPurgeHistory, PurgeHistory{Before: r.EndedAt.Add(time.Nanosecond)})
	if len(h.f.State().History) != 0 {
		t.Errorf("history after purge_history %+v, want none", h.f.State().History)
	}
	h.refused(CmdPurgeHistory, PurgeHistory{}, ErrInvalid)
}

func TestHistory_BoundedCount(t *testing.T) {
	t.Parallel()
	var h []HistoryRecord
	batch := make([]HistoryRecord, 0, 1000)
	for id := uint64(1); id <= MaxHistoryRecords+1500; id++ {
		batch = append(batch, HistoryRecord{ID: id, State: StateDone})
		if len(batch) == cap(batch) {
			h = addHistory(h, batch)
			batch = batch[:0]
		}
	}
	h = addHistory(h, batch)
	if len(h) != MaxHistoryRecords || h[0].ID != 1501 || h[len(h)-1].ID != MaxHistoryRecords+1500 {
		t.Fatalf("history of %d records from %d to %d, want the newest %d", len(h), h[0].ID, h[len(h)-1].ID, MaxHistoryRecords)
	}
}

// A record carries what confinement measured: CPU of every attempt, the
// largest peak of one attempt; nil when no node reported usage.
func TestHistory_RecordCarriesUsage(t *testing.T) {
	t.Parallel()
	j := &Job{ID: 1, Owner: "alice", Attempt: 2, Attempts: []Attempt{
		{N: 1, Usage: []NodeUsage{{Node: "a", CPUSeconds: 2, MaxRSSBytes: 100}, {Node: "b", CPUSeconds: 3, MaxRSSBytes: 50}}},
		{N: 2, Usage: []NodeUsage{{Node: "a", CPUSeconds: 4, MaxRSSBytes: 120}}},
	}}
	r := Record(j)
	if r.Usage == nil || r.Usage.CPUSeconds != 9 || r.Usage.MaxRSSBytes != 150 {
		t.Fatalf("record usage %+v, want 9 CPU s and a peak of 150 bytes", r.Usage)
	}
	if r := Record(&Job{ID: 2, Attempts: []Attempt{{N: 1}}}); r.Usage != nil {
		t.Fatalf("record of an unconfined job has usage %+v", r.Usage)
	}
}
