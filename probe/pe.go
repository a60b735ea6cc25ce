package probe

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/nodestate"
)

// peFlagError keeps the user-facing message free of the sentinel's text
// while still letting callers match ErrBadPEFlag with errors.Is.
type peFlagError struct{ msg string }

func (e *peFlagError) Error() string { return e.msg }
func (e *peFlagError) Unwrap() error { return ErrBadPEFlag }

// ParsePEFlag parses one --pe KIND=COUNT declaration, for accelerators
// shoal cannot detect. KIND is folded to lower case and may hold letters,
// digits, '-' and '_'; COUNT is a positive integer.
func ParsePEFlag(s string) (nodestate.PE, error) {
	bad := func(reason string) (nodestate.PE, error) {
		return nodestate.PE{}, &peFlagError{msg: fmt.Sprintf("--pe %q: %s", s, reason)}
	}
	kind, count, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return bad("want KIND=COUNT, e.g. --pe fpga=2")
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind == "" {
		return bad("kind is empty, e.g. --pe fpga=2")
	}
	for _, r := range kind {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return bad("kind may hold only letters, digits, '-' and '_', e.g. --pe fpga=2")
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n <= 0 {
		return bad(fmt.Sprintf("count must be a positive integer, e.g. --pe %s=2", kind))
	}
	return nodestate.PE{Kind: kind, Count: n}, nil
}

// ParsePEFlags parses every repeated --pe flag; a kind given twice is an
// error because silently summing or overriding would hide a typo.
func ParsePEFlags(flags []string) ([]nodestate.PE, error) {
	out := make([]nodestate.PE, 0, len(flags))
	seen := make(map[string]bool, len(flags))
	for _, f := range flags {
		pe, err := ParsePEFlag(f)
		if err != nil {
			return nil, err
		}
		if seen[pe.Kind] {
			return nil, &peFlagError{msg: fmt.Sprintf("--pe %q: kind %q declared twice", f, pe.Kind)}
		}
		seen[pe.Kind] = true
		out = append(out, pe)
	}
	return out, nil
}

// groupPEs merges entries with the same kind, model and memory into one
// entry with the summed count, keeping first-seen order so that output is
// stable between scans.
func groupPEs(in []nodestate.PE) []nodestate.PE {
	type key struct {
		kind, model string
		mem         uint64
	}
	idx := make(map[key]int, len(in))
	var out []nodestate.PE
	for _, pe := range in {
		k := key{pe.Kind, pe.Model, pe.MemBytes}
		if i, ok := idx[k]; ok {
			out[i].Count += pe.Count
			continue
		}
		idx[k] = len(out)
		out = append(out, pe)
	}
	return out
}

// MergePEs builds a node's inventory: the CPU PE first, then detected GPUs,
// then declared PEs. A declared kind replaces every detected entry of the
// same kind, because the operator declares what shoal gets wrong or cannot
// see, and adding both would count the same devices twice.
func MergePEs(cpu nodestate.PE, detected, declared []nodestate.PE) []nodestate.PE {
	override := make(map[string]bool, len(declared))
	for _, d := range declared {
		override[d.Kind] = true
	}
	var out []nodestate.PE
	if !override[cpu.Kind] {
		out = append(out, cpu)
	}
	for _, d := range groupPEs(detected) {
		if !override[d.Kind] {
			out = append(out, d)
		}
	}
	return append(out, declared...)
}
