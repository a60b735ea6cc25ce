package raftfsm

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// DrainNode (drain_node) takes a node out of service, as Slurm's and Nomad's drain do: the leader
// places no new attempt on it, the attempts running there finish, and once Deadline (counted from
// the command's time) has passed the leader fails them with retry so they run elsewhere. A zero
// Deadline waits for them forever. Draining a drained node again replaces its deadline.
type DrainNode struct {
	Node     string        `json:"node"`
	Deadline time.Duration `json:"deadline,omitempty"`
}

// UndrainNode (undrain_node) returns a drained node to service. Undraining a node that is not
// drained is a no-op.
type UndrainNode struct {
	Node string `json:"node"`
}

// Drain is one drained node in the state.
type Drain struct {
	Node string `json:"node"`
	// Since is when the node was first drained (a new deadline keeps it).
	Since time.Time `json:"since"`
	// Deadline is when the attempts left on the node are failed with retry; zero = never.
	Deadline time.Time `json:"deadline,omitzero"`
}

// MaxDrainDeadline bounds a drain's deadline: a year is "never" for every practical purpose, and
// the bound keeps Since+Deadline inside the years a snapshot can hold.
const MaxDrainDeadline = 366 * 24 * time.Hour

// MaxDrains bounds the drained nodes the state holds (a misbehaving script cannot grow it).
const MaxDrains = 4096

// Expired reports whether the drain's deadline has passed at now.
func (d Drain) Expired(now time.Time) bool {
	return !d.Deadline.IsZero() && !now.Before(d.Deadline)
}

func (s *State) drainNode(at time.Time, b *DrainNode) (Result, error) {
	if err := nonEmpty("node", b.Node); err != nil {
		return Result{}, err
	}
	if b.Deadline < 0 || b.Deadline > MaxDrainDeadline {
		return Result{}, fmt.Errorf("%w: deadline = %v, want 0 (none) to %v", ErrInvalid, b.Deadline, MaxDrainDeadline)
	}
	d := Drain{Node: b.Node, Since: at}
	if old, ok := s.Drains[b.Node]; ok {
		d.Since = old.Since
	} else if len(s.Drains) >= MaxDrains {
		return Result{}, fmt.Errorf("%w: %d nodes are drained already, at most %d", ErrInvalid, len(s.Drains), MaxDrains)
	}
	if b.Deadline > 0 {
		d.Deadline = at.Add(b.Deadline)
	}
	if old, ok := s.Drains[b.Node]; ok && old.Deadline.Equal(d.Deadline) {
		return Result{Noop: true}, nil // drained again, same deadline (a re-proposal): nothing new
	}
	if s.Drains == nil {
		s.Drains = map[string]Drain{}
	}
	s.Drains[b.Node] = d
	return Result{}, nil
}

func (s *State) undrainNode(_ time.Time, b *UndrainNode) (Result, error) {
	if err := nonEmpty("node", b.Node); err != nil {
		return Result{}, err
	}
	if _, ok := s.Drains[b.Node]; !ok {
		return Result{Noop: true}, nil
	}
	delete(s.Drains, b.Node)
	return Result{}, nil
}

// Drained returns the drain of node and whether it is drained.
func (s *State) Drained(node string) (Drain, bool) {
	d, ok := s.Drains[node]
	return d, ok
}

// DrainState is what `shoal nodes` shows of a node's drain: "draining" while live attempts still
// hold it, "drained" once none do, "" when it is not drained.
func DrainState(s *State, node string) string {
	if _, ok := s.Drains[node]; !ok {
		return ""
	}
	if len(JobsOn(s, node)) > 0 {
		return "draining"
	}
	return "drained"
}

// sortedDrains returns the drains ordered by node: the canonical wire form.
func sortedDrains(m map[string]Drain) []Drain {
	out := make([]Drain, 0, len(m))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[n])
	}
	return out
}
