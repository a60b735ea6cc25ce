package raftfsm

import (
	"fmt"
	"math"
	"strings"

	"github.com/shoal-hpc/shoal/internal/jobfmt"
)

// Bounds on user input, so that one bad submit cannot bloat every node's state.
const (
	MaxAttemptsLimit = 100     // JobSpec.MaxAttempts
	MaxNP            = 1 << 20 // processes of one job
	maxStringLen     = 4096    // any single name, reason or argument
)

// MPI flavours accepted in JobSpec.MPI ("" = detect from the executable).
var mpiFlavours = []string{"", "mpich", "openmpi", "none"}

// ValidateSpec reports whether submit_job would accept sp's form (bounds, lengths, fields; not
// the per-user quotas, which depend on the state). The API calls it so that a bad spec is refused
// before it takes room in every node's raft log.
func ValidateSpec(sp JobSpec) error {
	c := sp.clone()
	normalizeSpec(&c)
	return validateSpec(&c)
}

// validateSpec checks a spec at submit and fills its defaults. The error names the field.
func validateSpec(s *JobSpec) error {
	if len(s.Cmd) == 0 || s.Cmd[0] == "" {
		return fmt.Errorf("%w: spec.cmd is empty", ErrInvalid)
	}
	for i, a := range s.Cmd {
		if err := checkLen(fmt.Sprintf("spec.cmd[%d]", i), a); err != nil {
			return err
		}
	}
	for i, e := range s.Env {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return fmt.Errorf("%w: spec.env[%d] = %q, want KEY=VALUE", ErrInvalid, i, e)
		}
		if err := checkLen(fmt.Sprintf("spec.env[%d]", i), e); err != nil {
			return err
		}
	}
	if s.NP < 1 || s.NP > MaxNP {
		return fmt.Errorf("%w: spec.np = %d, must be in [1,%d]", ErrInvalid, s.NP, MaxNP)
	}
	if s.PPN < 0 || s.PPN > s.NP {
		return fmt.Errorf("%w: spec.ppn = %d, must be in [0,np=%d]", ErrInvalid, s.PPN, s.NP)
	}
	// Each count is bounded before it is added and the sum stops at the bound, so no total wraps
	// around (counts of 2^63-1 used to sum to a small np, pass placement and block the queue).
	slots := 0
	for i, h := range s.Hostfile {
		if h.Host == "" || h.Slots < 0 || h.Slots > MaxNP {
			return fmt.Errorf("%w: spec.hostfile[%d] = %q:%d, want a host and slots in [0,%d]", ErrInvalid, i, h.Host, h.Slots, MaxNP)
		}
		if slots += h.Slots; slots > MaxNP {
			return fmt.Errorf("%w: spec.hostfile holds more than %d slots", ErrInvalid, MaxNP)
		}
	}
	for i, p := range s.PEs {
		if p.Kind == "" || p.PerProc < 1 {
			return fmt.Errorf("%w: spec.pes[%d] = %q:%d, want a kind and per_proc >= 1", ErrInvalid, i, p.Kind, p.PerProc)
		}
	}
	if !contains(mpiFlavours, s.MPI) {
		return fmt.Errorf("%w: spec.mpi = %q, want one of mpich, openmpi, none or empty", ErrInvalid, s.MPI)
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.MaxAttempts < 1 || s.MaxAttempts > MaxAttemptsLimit {
		return fmt.Errorf("%w: spec.max_attempts = %d, must be in [1,%d]", ErrInvalid, s.MaxAttempts, MaxAttemptsLimit)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w: spec.timeout = %v, must be >= 0", ErrInvalid, s.Timeout)
	}
	if s.Alpha != nil {
		if err := unitInterval("spec.alpha", *s.Alpha); err != nil {
			return err
		}
	}
	if e := s.Elastic; e != nil {
		if e.MinNP < 1 || e.MinNP > e.MaxNP || e.MaxNP > MaxNP {
			return fmt.Errorf("%w: spec.elastic = %d:%d, want 1 <= min <= max <= %d", ErrInvalid, e.MinNP, e.MaxNP, MaxNP)
		}
		if s.NP < e.MinNP || s.NP > e.MaxNP {
			return fmt.Errorf("%w: spec.np = %d outside spec.elastic %d:%d", ErrInvalid, s.NP, e.MinNP, e.MaxNP)
		}
		if e.Deadline < 0 || e.Iterations < 0 || math.IsNaN(e.BudgetNH) || e.BudgetNH < 0 || math.IsInf(e.BudgetNH, 0) {
			return fmt.Errorf("%w: spec.elastic deadline, budget_nh and iterations must be >= 0", ErrInvalid)
		}
		if u := s.Unit(); e.MinNP%u != 0 || e.MaxNP%u != 0 || s.NP%u != 0 {
			return fmt.Errorf("%w: spec.elastic %d:%d and np %d must be multiples of ppn %d", ErrInvalid, e.MinNP, e.MaxNP, s.NP, u)
		}
		if err := checkLen("spec.elastic.checkpoint_dir", e.CheckpointDir); err != nil {
			return err
		}
	}
	if err := validateName(s.Name); err != nil {
		return err
	}
	if y := s.Begin.Year(); !s.Begin.IsZero() && (y < 1 || y > 9999) {
		return fmt.Errorf("%w: spec.begin year %d outside [1,9999]", ErrInvalid, y)
	}
	if err := validateDepend(s.Depend); err != nil {
		return err
	}
	if err := validateArray(s.Array); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"spec.output", s.Output}, {"spec.error", s.Error}} {
		if err := checkLen(f.name, f.v); err != nil {
			return err
		}
		if err := jobfmt.CheckPattern(f.v); err != nil {
			return fmt.Errorf("%w: %s %w", ErrInvalid, f.name, err)
		}
	}
	if s.Array != nil && s.Immediate {
		return fmt.Errorf("%w: an array cannot be immediate (its tasks queue by design)", ErrInvalid)
	}
	if err := validateConfinement(s); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{
		{"spec.workdir", s.Workdir}, {"spec.policy", s.Policy}, {"spec.relax", s.Relax},
	} {
		if err := checkLen(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// validateHosts checks an allocation: at least one host, distinct non-empty nodes, procs >= 1, and
// the process count the job asked for (any count within MIN:MAX for an elastic job).
func validateHosts(hosts []Host, spec *JobSpec) error {
	if len(hosts) == 0 {
		return fmt.Errorf("%w: hosts is empty", ErrInvalid)
	}
	seen := make(map[string]bool, len(hosts))
	total := 0
	for i, h := range hosts {
		if h.Node == "" || h.NP < 1 || h.NP > MaxNP {
			return fmt.Errorf("%w: hosts[%d] = %q:%d, want a node and procs in [1,%d]", ErrInvalid, i, h.Node, h.NP, MaxNP)
		}
		if err := checkLen(fmt.Sprintf("hosts[%d].node", i), h.Node); err != nil {
			return err
		}
		if seen[h.Node] {
			return fmt.Errorf("%w: hosts[%d]: node %q twice", ErrInvalid, i, h.Node)
		}
		seen[h.Node] = true
		if total += h.NP; total > MaxNP { // each count <= MaxNP: the sum cannot wrap before this
			return fmt.Errorf("%w: hosts hold more than %d processes", ErrInvalid, MaxNP)
		}
	}
	if e := spec.Elastic; e != nil {
		if total < e.MinNP || total > e.MaxNP {
			return fmt.Errorf("%w: hosts hold %d processes, elastic job needs %d:%d", ErrInvalid, total, e.MinNP, e.MaxNP)
		}
	} else if total != spec.NP {
		return fmt.Errorf("%w: hosts hold %d processes, job needs np=%d", ErrInvalid, total, spec.NP)
	}
	return nil
}

func checkLen(field, v string) error {
	if len(v) > maxStringLen {
		return fmt.Errorf("%w: %s is %d bytes, at most %d", ErrInvalid, field, len(v), maxStringLen)
	}
	return nil
}

func nonEmpty(field, v string) error {
	if v == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalid, field)
	}
	return checkLen(field, v)
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
