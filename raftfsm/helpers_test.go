package raftfsm

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// harness applies commands to an FSM as raft would, one log index at a time, and keeps the log.
type harness struct {
	t   testing.TB
	f   *FSM
	log []*raft.Log
}

// newHarness starts from a fresh FSM whose job index is built from the start, so that every
// command's writes of jobs keep it (checkIndex compares it with a rebuild after each).
func newHarness(t testing.TB) *harness {
	f := New()
	f.View(func(s *State) { s.index() })
	return &harness{t: t, f: f}
}

// entry encodes a command stamped one second after the previous one.
func (h *harness) entry(typ string, body any) *raft.Log {
	h.t.Helper()
	idx := uint64(len(h.log) + 1)
	data, err := Encode(typ, t0.Add(time.Duration(idx)*time.Second), body)
	if err != nil {
		h.t.Fatalf("encode %s: %v", typ, err)
	}
	return &raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: data}
}

// do applies a command and returns its result.
func (h *harness) do(typ string, body any) Result {
	h.t.Helper()
	return h.raw(h.entry(typ, body))
}

func (h *harness) raw(l *raft.Log) Result {
	h.t.Helper()
	h.log = append(h.log, l)
	out := h.f.Apply(l)
	res, ok := out.(Result)
	if !ok {
		h.t.Fatalf("Apply returned %T, want Result", out)
	}
	checkInvariants(h.t, h.f.State())
	checkIndex(h.t, h.f)
	return res
}

// checkIndex fails t when the FSM's job index, once built, differs from
// one built anew from its jobs: a write of a job that bypassed it.
func checkIndex(t testing.TB, f *FSM) {
	t.Helper()
	f.View(func(s *State) {
		if s.jobs == nil {
			return
		}
		fresh := (&State{Jobs: s.Jobs}).index()
		if !reflect.DeepEqual(s.jobs, fresh) {
			t.Fatalf("job index %+v, rebuilt %+v", *s.jobs, *fresh)
		}
	})
}

// ok applies a command that must succeed.
func (h *harness) ok(typ string, body any) Result {
	h.t.Helper()
	res := h.do(typ, body)
	if res.Err != nil {
		h.t.Fatalf("%s %+v: %v", typ, body, res.Err)
	}
	return res
}

// refused applies a command that must fail with want and leave the state unchanged.
func (h *harness) refused(typ string, body any, want error) Result {
	h.t.Helper()
	before := stateBytes(h.t, h.f)
	res := h.do(typ, body)
	if !errors.Is(res.Err, want) {
		h.t.Fatalf("%s %+v: err = %v, want %v", typ, body, res.Err, want)
	}
	if after := stateBytes(h.t, h.f); !bytes.Equal(before, after) {
		h.t.Fatalf("%s refused but changed the state:\nbefore %s\nafter  %s", typ, before, after)
	}
	return res
}

func (h *harness) job(id uint64) *Job {
	h.t.Helper()
	j := h.f.State().Jobs[id]
	if j == nil {
		h.t.Fatalf("no job %d", id)
	}
	return j
}

func (h *harness) wantState(id uint64, want JobState) *Job {
	h.t.Helper()
	j := h.job(id)
	if j.State != want {
		h.t.Fatalf("job %d state = %s (%s), want %s", id, j.State, j.Reason, want)
	}
	return j
}

// submit adds a job of np processes owned by alice.
func (h *harness) submit(req string, np int) uint64 {
	h.t.Helper()
	return h.ok(CmdSubmitJob, SubmitJob{RequestID: req, Owner: "alice", Spec: JobSpec{Cmd: []string{"./ring"}, NP: np}}).JobID
}

// launch places attempt n of job id on two nodes (procs 2 and np-2) and acks both.
func (h *harness) launch(id uint64, n int, a, b string) {
	h.t.Helper()
	np := h.job(id).Spec.NP
	h.ok(CmdPlaceJob, PlaceJob{ID: id, Attempt: n, Hosts: []Host{{Node: a, NP: 2}, {Node: b, NP: np - 2}}})
	h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: n, Node: a})
	h.ok(CmdAckReservation, AckReservation{ID: id, Attempt: n, Node: b})
}

// stateBytes is the canonical JSON of the FSM's state, without the index.
func stateBytes(t testing.TB, f *FSM) []byte {
	t.Helper()
	var b []byte
	var err error
	f.View(func(s *State) { b, err = s.MarshalJSON() })
	if err != nil {
		t.Fatalf("marshal state: %v", err)
	}
	return b
}

func snapshotBytes(t testing.TB, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	defer snap.Release()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatalf("persist: %v", err)
	}
	if !sink.closed || sink.cancelled {
		t.Fatalf("sink closed=%v cancelled=%v", sink.closed, sink.cancelled)
	}
	return sink.Bytes()
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { m.cancelled = true; return nil }
func (m *memSink) Close() error  { m.closed = true; return nil }

var _ raft.SnapshotSink = (*memSink)(nil)

// checkInvariants fails the test if s breaks a rule the FSM promises to keep.
func checkInvariants(t testing.TB, s *State) {
	t.Helper()
	if err := invariants(s); err != nil {
		t.Fatalf("invariant broken: %v", err)
	}
}

func invariants(s *State) error {
	if s.NextJobID < 1 {
		return fmt.Errorf("next_job_id %d", s.NextJobID)
	}
	reqs := map[string]bool{}
	for id, j := range s.Jobs {
		if j.ID != id || id == 0 || id >= s.NextJobID {
			return fmt.Errorf("job key %d, id %d, next %d", id, j.ID, s.NextJobID)
		}
		if reqs[j.RequestID] {
			return fmt.Errorf("request %q twice", j.RequestID)
		}
		reqs[j.RequestID] = true
		if s.byRequest[j.RequestID] != id {
			return fmt.Errorf("byRequest[%q] = %d, want %d", j.RequestID, s.byRequest[j.RequestID], id)
		}
		if j.Attempt != len(j.Attempts) {
			return fmt.Errorf("job %d attempt %d with %d attempts", id, j.Attempt, len(j.Attempts))
		}
		if j.failures() > j.Spec.MaxAttempts {
			return fmt.Errorf("job %d: %d failed attempts > max %d", id, j.failures(), j.Spec.MaxAttempts)
		}
		if (j.Elastic != nil) != (j.Spec.Elastic != nil) {
			return fmt.Errorf("job %d: elastic record %v for spec %v", id, j.Elastic, j.Spec.Elastic)
		}
		liveAttempts := 0
		for i, a := range j.Attempts {
			if a.N != i+1 {
				return fmt.Errorf("job %d attempts[%d].N = %d", id, i, a.N)
			}
			if !a.Ended() {
				liveAttempts++
				if a.N != j.Attempt {
					return fmt.Errorf("job %d: attempt %d live but current is %d", id, a.N, j.Attempt)
				}
			}
			if !slices.IsSorted(a.Acks) || len(slices.Compact(slices.Clone(a.Acks))) != len(a.Acks) {
				return fmt.Errorf("job %d attempt %d acks %v not sorted/unique", id, a.N, a.Acks)
			}
			for _, n := range a.Acks {
				if !a.Holds(n) {
					return fmt.Errorf("job %d attempt %d acked by %q, not allocated", id, a.N, n)
				}
			}
			if a.State == StateRunning && !a.AllAcked() {
				return fmt.Errorf("job %d attempt %d running without all acks", id, a.N)
			}
		}
		if liveAttempts > 1 {
			return fmt.Errorf("job %d has %d live attempts", id, liveAttempts)
		}
		cur := j.Current()
		if j.State.Live() != (cur != nil && !cur.Ended()) {
			return fmt.Errorf("job %d is %s but current attempt is %+v", id, j.State, cur)
		}
		if j.State.Live() && cur.State != j.State {
			return fmt.Errorf("job %d is %s, attempt %d is %s", id, j.State, cur.N, cur.State)
		}
		if j.State.Terminal() == j.EndedAt.IsZero() {
			return fmt.Errorf("job %d is %s with ended_at %v", id, j.State, j.EndedAt)
		}
		if (j.WaitReason != "" || !j.WaitSince.IsZero()) && (j.State != StateQueued || j.WaitReason == "" || j.WaitSince.IsZero()) {
			return fmt.Errorf("job %d is %s with wait reason %q since %v", id, j.State, j.WaitReason, j.WaitSince)
		}
		if j.State == StatePlacing {
			return fmt.Errorf("job %d entered placing", id)
		}
	}
	if len(s.byRequest) != len(s.Jobs) {
		return fmt.Errorf("byRequest has %d entries for %d jobs", len(s.byRequest), len(s.Jobs))
	}
	for k, p := range s.Probes {
		if p.ProbeKey != k || p.Generation == 0 || p.Restarts < 1 {
			return fmt.Errorf("probe %v: %+v", k, p)
		}
	}
	for i, r := range s.History {
		if i > 0 && r.ID <= s.History[i-1].ID {
			return fmt.Errorf("history out of order at %d: job %d after %d", i, r.ID, s.History[i-1].ID)
		}
		if _, live := s.Jobs[r.ID]; live || !r.State.finished() || r.ID >= s.NextJobID {
			return fmt.Errorf("history record of job %d (%s) beside a job of that ID, or unfinished", r.ID, r.State)
		}
	}
	if len(s.History) > MaxHistoryRecords {
		return fmt.Errorf("%d history records", len(s.History))
	}
	return nil
}

func rawLog(idx uint64, data string) *raft.Log {
	return &raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: []byte(data)}
}

func errorsJoinf(err error) error { return fmt.Errorf("log 9: kill_job: %w: job 3", err) }

func secs(n int) time.Duration { return time.Duration(n) * time.Second }
