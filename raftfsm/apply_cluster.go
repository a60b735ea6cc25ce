package raftfsm

import (
	"fmt"
	"slices"
	"time"
)

func (s *State) setSettings(_ time.Time, b *SetSettings) (Result, error) {
	if err := b.Settings.Validate(); err != nil {
		return Result{}, fmt.Errorf("settings: %w", err)
	}
	if b.Settings == s.Settings {
		return Result{Noop: true}, nil
	}
	s.Settings = b.Settings
	return Result{}, nil
}

func (s *State) setProbeDuties(at time.Time, b *SetProbeDuties) (Result, error) {
	if b.Cycle == 0 {
		return Result{}, fmt.Errorf("%w: cycle must be >= 1", ErrInvalid)
	}
	if b.Cycle < s.ProbeDuties.Cycle {
		return Result{}, fmt.Errorf("%w: cycle %d, recorded cycle is %d", ErrStaleCycle, b.Cycle, s.ProbeDuties.Cycle)
	}
	if b.RoundLen < 0 {
		return Result{}, fmt.Errorf("%w: round_len = %v, must be >= 0", ErrInvalid, b.RoundLen)
	}
	for r, round := range b.Rounds {
		busy := make(map[string]bool, 2*len(round))
		for i, p := range round {
			if p.From == "" || p.To == "" || p.From == p.To {
				return Result{}, fmt.Errorf("%w: rounds[%d][%d] = %q→%q, want two distinct nodes", ErrInvalid, r, i, p.From, p.To)
			}
			if err := checkLen(fmt.Sprintf("rounds[%d][%d]", r, i), p.From+p.To); err != nil {
				return Result{}, err
			}
			if busy[p.From] || busy[p.To] {
				return Result{}, fmt.Errorf("%w: rounds[%d]: a node is in two pairs (%q→%q)", ErrInvalid, r, p.From, p.To)
			}
			busy[p.From], busy[p.To] = true, true
		}
	}
	d := ProbeDuties{Cycle: b.Cycle, RoundLen: b.RoundLen, SetAt: at}
	if len(b.Rounds) > 0 {
		d.Rounds = ProbeDuties{Rounds: b.Rounds}.clone().Rounds
	}
	old := s.ProbeDuties
	if old.Cycle == d.Cycle && old.RoundLen == d.RoundLen && equalRounds(old.Rounds, d.Rounds) {
		return Result{Noop: true}, nil
	}
	s.ProbeDuties = d
	return Result{}, nil
}

func equalRounds(a, b [][]Test) bool {
	return slices.EqualFunc(a, b, func(x, y []Test) bool { return slices.Equal(x, y) })
}

func (s *State) probeRestart(at time.Time, b *ProbeRestart) (Result, error) {
	if err := nonEmpty("node", b.Node); err != nil {
		return Result{}, err
	}
	if !knownProbeKind(b.Kind) {
		return Result{}, fmt.Errorf("%w: kind = %q, want one of %v", ErrInvalid, b.Kind, ProbeKinds)
	}
	if err := nonEmpty("reason", b.Reason); err != nil {
		return Result{}, err
	}
	key := ProbeKey{Node: b.Node, Kind: b.Kind}
	p := Probe{ProbeKey: key}
	if old, ok := s.Probes[key]; ok {
		p = *old
	}
	if b.Generation != p.Generation {
		return Result{}, fmt.Errorf("%w: %s/%s generation %d, current is %d", ErrStaleGeneration, b.Node, b.Kind, b.Generation, p.Generation)
	}
	p.Generation++
	p.Restarts++
	p.LastReason, p.LastRestartAt = b.Reason, at
	s.Probes[key] = &p
	return Result{}, nil
}

func (s *State) removeNode(at time.Time, b *RemoveNode) (Result, error) {
	if err := nonEmpty("node", b.Node); err != nil {
		return Result{}, err
	}
	reason := fmt.Sprintf("node %s removed", b.Node)
	var res Result
	changed := map[uint64]*Job{}
	for _, id := range s.SortedJobIDs() {
		j := s.Jobs[id]
		if a := j.Current(); j.State.Live() && a != nil && !a.Ended() && a.Holds(b.Node) {
			changed[id] = failedCopy(j, at, reason, true)
			res.JobIDs = append(res.JobIDs, id)
		}
	}
	var probes []ProbeKey
	for _, k := range ProbeKinds {
		if _, ok := s.Probes[ProbeKey{Node: b.Node, Kind: k}]; ok {
			probes = append(probes, ProbeKey{Node: b.Node, Kind: k})
		}
	}
	duties, dutiesChanged := withoutNode(s.ProbeDuties, b.Node)

	for _, j := range changed {
		s.setJob(j)
	}
	for _, k := range probes {
		delete(s.Probes, k)
	}
	if dutiesChanged {
		s.ProbeDuties = duties
	}
	res.Noop = len(changed) == 0 && len(probes) == 0 && !dutiesChanged
	return res, nil
}

// withoutNode drops the pairs that involve node from d (the node leaves the rest of the cycle).
func withoutNode(d ProbeDuties, node string) (ProbeDuties, bool) {
	out := d.clone()
	changed := false
	for i, round := range out.Rounds {
		kept := round[:0]
		for _, p := range round {
			if p.From == node || p.To == node {
				changed = true
				continue
			}
			kept = append(kept, p)
		}
		out.Rounds[i] = kept
	}
	return out, changed
}
