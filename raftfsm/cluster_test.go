package raftfsm

import (
	"math"
	"strings"
	"testing"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if h.f.State().Settings != DefaultSettings() {
		t.Fatalf("a new FSM does not start with the default weights")
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	bad := []struct {
		field string
		mod   func(*Settings)
	}{
		{"alpha", func(s *Settings) { s.Alpha = 1.5 }},
		{"alpha", func(s *Settings) { s.Alpha = math.NaN() }},
		{"w_lt", func(s *Settings) { s.WLT = -0.1; s.WBW = 1.1 }},
		{"w_lt + w_bw", func(s *Settings) { s.WLT = 0.5 }},
		{"attr.clock", func(s *Settings) { s.Attr.Clock = -1 }},
		{"attribute weights sum", func(s *Settings) { s.Attr.Load = 0.9 }},
	}
	for _, b := range bad {
		s := DefaultSettings()
		b.mod(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), b.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", s, err, b.field)
		}
		if !math.IsNaN(s.Alpha) { // NaN cannot travel in JSON at all
			h.refused(CmdSetSettings, SetSettings{Settings: s}, ErrInvalid)
		}
	}
	s := DefaultSettings()
	s.Alpha, s.WLT, s.WBW = 0.6, 0.1, 0.9
	h.ok(CmdSetSettings, SetSettings{Settings: s})
	if h.f.State().Settings != s {
		t.Fatalf("settings not applied")
	}
	if !h.ok(CmdSetSettings, SetSettings{Settings: s}).Noop {
		t.Errorf("same settings twice is not a no-op")
	}
}

func TestProbeRestart_CompareAndSwap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	key := ProbeKey{Node: "n1", Kind: ProbeBandwidth}
	h.ok(CmdProbeRestart, ProbeRestart{Node: "n1", Kind: ProbeBandwidth, Reason: "killed by signal 9", Generation: 0})
	// The leader lost leadership before it heard back and a new leader re-proposes: refused.
	h.refused(CmdProbeRestart, ProbeRestart{Node: "n1", Kind: ProbeBandwidth, Reason: "killed by signal 9", Generation: 0}, ErrStaleGeneration)
	h.ok(CmdProbeRestart, ProbeRestart{Node: "n1", Kind: ProbeBandwidth, Reason: "no heartbeat", Generation: 1})
	p := h.f.State().Probes[key]
	if p.Generation != 2 || p.Restarts != 2 || p.LastReason != "no heartbeat" || !p.LastRestartAt.Equal(t0.Add(secs(3))) {
		t.Fatalf("probe %+v", p)
	}
	h.refused(CmdProbeRestart, ProbeRestart{Node: "n1", Kind: "gpu", Reason: "x"}, ErrInvalid)
	h.refused(CmdProbeRestart, ProbeRestart{Node: "", Kind: ProbeLatency, Reason: "x"}, ErrInvalid)
	h.refused(CmdProbeRestart, ProbeRestart{Node: "n1", Kind: ProbeLatency}, ErrInvalid)
}

func TestProbeDuties(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rounds := [][]Test{{{"a", "b"}, {"c", "d"}}, {{"a", "c"}, {"b", "d"}}, {{"a", "d"}, {"b", "c"}}}
	h.ok(CmdSetProbeDuties, SetProbeDuties{Cycle: 2, Rounds: rounds, RoundLen: 5e9})
	d := h.f.State().ProbeDuties
	if d.Cycle != 2 || !equalRounds(d.Rounds, rounds) || !d.SetAt.Equal(t0.Add(secs(1))) {
		t.Fatalf("duties %+v", d)
	}
	if !h.ok(CmdSetProbeDuties, SetProbeDuties{Cycle: 2, Rounds: rounds, RoundLen: 5e9}).Noop {
		t.Errorf("re-proposed duties not a no-op")
	}
	h.refused(CmdSetProbeDuties, SetProbeDuties{Cycle: 1, Rounds: rounds}, ErrStaleCycle)
	h.refused(CmdSetProbeDuties, SetProbeDuties{Cycle: 0}, ErrInvalid)
	h.refused(CmdSetProbeDuties, SetProbeDuties{Cycle: 3, Rounds: [][]Test{{{"a", "b"}, {"b", "c"}}}}, ErrInvalid)
	h.refused(CmdSetProbeDuties, SetProbeDuties{Cycle: 3, Rounds: [][]Test{{{"a", "a"}}}}, ErrInvalid)
	h.refused(CmdSetProbeDuties, SetProbeDuties{Cycle: 3, Rounds: [][]Test{{{"a", ""}}}}, ErrInvalid)
	h.refused(CmdSetProbeDuties, SetProbeDuties{Cycle: 3, RoundLen: -1}, ErrInvalid)
	// Same cycle, a node dropped: replaces the rounds.
	h.ok(CmdSetProbeDuties, SetProbeDuties{Cycle: 2, Rounds: [][]Test{{{"a", "b"}}, {{"a", "c"}}, {{"b", "c"}}}})
	h.ok(CmdSetProbeDuties, SetProbeDuties{Cycle: 3})
	if d := h.f.State().ProbeDuties; d.Cycle != 3 || d.Rounds != nil {
		t.Fatalf("duties %+v", d)
	}
}
