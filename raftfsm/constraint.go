package raftfsm

import (
	"fmt"
	"slices"
	"strings"
)

// A job's --constraint, as Slurm writes it: node features joined by '&'
// (all of them) and '|' (any of them), '&' binding tighter, so
// "intel&ib|amd" is a node with intel and ib, or one with amd. Slurm's
// brackets, counts (ib*2) and the nodes-of-one-feature forms are refused
// with a clear error rather than read differently.

// Constraint is a parsed --constraint: any of its terms, each all of its features.
type Constraint [][]string

// MaxFeatureLen bounds one feature's name; maxConstraint the whole expression.
const (
	MaxFeatureLen = 64
	maxConstraint = 1024
)

// ParseConstraint reads s; "" is no constraint.
func ParseConstraint(s string) (Constraint, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > maxConstraint {
		return nil, fmt.Errorf("%w: constraint of %d bytes, at most %d", ErrInvalid, len(s), maxConstraint)
	}
	if i := strings.IndexAny(s, "[]()*!,"); i >= 0 {
		return nil, fmt.Errorf("%w: constraint %q: %q is not supported; join features with & (all) and | (any)", ErrInvalid, s, s[i])
	}
	var c Constraint
	for _, term := range strings.Split(s, "|") {
		var all []string
		for _, f := range strings.Split(term, "&") {
			f = strings.TrimSpace(f)
			if err := CheckFeature(f); err != nil {
				return nil, fmt.Errorf("constraint %q: %w", s, err)
			}
			all = append(all, f)
		}
		c = append(c, all)
	}
	return c, nil
}

// CheckFeature refuses a feature name a constraint could not name.
func CheckFeature(f string) error {
	if f == "" || len(f) > MaxFeatureLen {
		return fmt.Errorf("%w: feature %q: want 1 to %d characters", ErrInvalid, f, MaxFeatureLen)
	}
	for _, r := range f {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':' || r == '=') {
			return fmt.Errorf("%w: feature %q: use letters, digits and - _ . : =", ErrInvalid, f)
		}
	}
	return nil
}

// Matches says whether a node with features satisfies c (always, for no constraint).
func (c Constraint) Matches(features []string) bool {
	if len(c) == 0 {
		return true
	}
	for _, all := range c {
		ok := true
		for _, f := range all {
			if !slices.Contains(features, f) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
