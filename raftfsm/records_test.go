package raftfsm

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestRestoreRefusesInconsistentRecords is an administrator's crafted snapshot: each case edits
// one record of a real state into one no command could make (the first one is the record that
// made a head relaunch a job every few seconds: a running attempt numbered other than its place).
// Restore and CheckSnapshot refuse each with an error naming the job and the rule, and the FSM
// keeps the state it had.
func TestRestoreRefusesInconsistentRecords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit("running", 4)
	h.launch(id, 1, "n1", "n2")
	h.ok(CmdStartJob, StartJob{ID: id, Attempt: 1})
	h.ok(CmdProbeRestart, ProbeRestart{Node: "n1", Kind: ProbeLatency, Reason: "stale"})
	good := snapshotBytes(t, h.f)

	cases := []struct {
		name, want string
		edit       func(s *State)
	}{
		{"attempt numbered other than its place", "attempts[0] is numbered 2", func(s *State) { s.Jobs[id].Attempts[0].N = 2 }},
		{"current attempt not the last", "current attempt 1 of 2 attempts", func(s *State) {
			s.Jobs[id].Attempts = append(s.Jobs[id].Attempts, s.Jobs[id].Attempts[0].clone())
			s.Jobs[id].Attempts[1].N = 2
		}},
		{"running job whose attempt ended", "the job is running and its current attempt is not", func(s *State) { s.Jobs[id].Attempts[0].State = StateDone }},
		{"finished job with a live attempt", "the job is done but its attempt 1 is running", func(s *State) { s.Jobs[id].State = StateDone }},
		{"head outside the allocation", `head "n9" is not one of the hosts`, func(s *State) { s.Jobs[id].Attempts[0].Head = "n9" }},
		{"ack from a node outside the allocation", `node "n0" acked`, func(s *State) { s.Jobs[id].Attempts[0].Acks = []string{"n0", "n1", "n2"} }},
		{"running without every ack", "running while [n2] never reserved", func(s *State) { s.Jobs[id].Attempts[0].Acks = []string{"n1"} }},
		{"hosts that do not hold np", "hosts hold 4 processes, job needs np=3", func(s *State) { s.Jobs[id].Spec.NP = 3 }},
		{"unknown attempt state", `state "zombie" is not an attempt state`, func(s *State) { s.Jobs[id].Attempts[0].State = "zombie" }},
		{"unknown job state", `state "placing" is not a job state`, func(s *State) { s.Jobs[id].State = StatePlacing }},
		{"spec no submit accepts", "spec.cmd is empty", func(s *State) { s.Jobs[id].Spec.Cmd = nil }},
		{"max_attempts below the attempts counted", "counted against max_attempts -1", func(s *State) { s.Jobs[id].Spec.MaxAttempts = -1 }},
		{"array ID above the task's own", "an array's ID is its first task's", func(s *State) { s.Jobs[id].ArrayJobID = id + 5 }},
		{"probe of an unknown kind", `probe "rootkit" of node "n1"`, func(s *State) {
			for _, p := range s.Probes {
				p.Kind = "rootkit"
			}
		}},
		{"placement weights out of bounds", "alpha", func(s *State) { s.Settings.Alpha = 7 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, st, err := decodeSnapshot(good)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(st)
			bad, err := encodeSnapshot(99, st)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := CheckSnapshot(bad); !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSnapshot: %v, want a bad snapshot naming %q", err, tc.want)
			}
			f := New()
			if err := f.Restore(io.NopCloser(bytes.NewReader(good))); err != nil {
				t.Fatal(err)
			}
			err = f.Restore(io.NopCloser(bytes.NewReader(bad)))
			// A spec only today's submit refuses: the operator's
			// CheckSnapshot refuses it, raft's own Restore takes it.
			if tc.name == "spec no submit accepts" {
				if err != nil {
					t.Fatalf("Restore: %v; raft's own restore must take a spec only today's submit refuses", err)
				}
				return
			}
			if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restore: %v, want a bad snapshot naming %q", err, tc.want)
			}
			if got := snapshotBytes(t, f); !bytes.Equal(got, good) || f.Index() != h.f.Index() {
				t.Fatalf("a refused restore changed the state:\n got %s\nwant %s", got, good)
			}
		})
	}
}
