package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// PE is one kind of processing element on a node (seed 001 §III.A): the
// CPUs, a group of identical GPUs, or an accelerator the operator declared.
type PE struct {
	// Kind is lowercase: "cpu", "gpu", or a declared kind such as "fpga".
	Kind string `json:"kind"`
	// Model names the device ("NVIDIA A100-SXM4-40GB"); empty for
	// declared PEs, which shoal cannot see.
	Model string `json:"model,omitempty"`
	// Count is the number of identical devices; for the CPU PE it is the
	// number of physical cores.
	Count int `json:"count"`
	// MemBytes is the memory of one device in bytes, 0 when unknown.
	MemBytes uint64 `json:"mem_bytes,omitempty"`
}

// peFlagError keeps the user-facing message free of the sentinel's text
// while still letting callers match ErrBadPEFlag with errors.Is.
type peFlagError struct{ msg string }

func (e *peFlagError) Error() string { return e.msg }
func (e *peFlagError) Unwrap() error { return ErrBadPEFlag }

// ParsePEFlag parses one --pe KIND=COUNT declaration, for accelerators
// shoal cannot detect. KIND is folded to lower case and may hold letters,
// digits, '-' and '_'; COUNT is a positive integer.
func ParsePEFlag(s string) (PE, error) {
	bad := func(reason string) (PE, error) {
		return PE{}, &peFlagError{msg: fmt.Sprintf("--pe %q: %s", s, reason)}
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
	return PE{Kind: kind, Count: n}, nil
}

// ParsePEFlags parses every repeated --pe flag; a kind given twice is an
// error because silently summing or overriding would hide a typo.
func ParsePEFlags(flags []string) ([]PE, error) {
	out := make([]PE, 0, len(flags))
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
func groupPEs(in []PE) []PE {
	type key struct {
		kind, model string
		mem         uint64
	}
	idx := make(map[key]int, len(in))
	var out []PE
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
func MergePEs(cpu PE, detected, declared []PE) []PE {
	override := make(map[string]bool, len(declared))
	for _, d := range declared {
		override[d.Kind] = true
	}
	var out []PE
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
