package netns

import (
	"errors"
	"fmt"
	"regexp"
)

// MaxNodes is the largest number of nodes one testbed holds: one /24 of
// addresses per testbed, .1 to .250.
const MaxNodes = 250

// maxNameLen bounds switch and node names (hostnames; also part of the
// namespace names).
const maxNameLen = 32

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Validate reports every problem of the topology at once, each naming the
// offending field, joined and wrapped in [ErrInvalidTopology].
func (t Topology) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	checkName := func(field, name string) {
		switch {
		case name == "":
			bad("%s: empty name", field)
		case len(name) > maxNameLen:
			bad("%s %q: longer than %d bytes", field, name, maxNameLen)
		case !nameRE.MatchString(name):
			bad("%s %q: must match %s", field, name, nameRE)
		}
	}
	checkRate := func(field string, mbit int, unshaped bool) {
		switch {
		case unshaped && mbit != 0:
			bad("%s: mbit %d with unshaped set; give one or the other", field, mbit)
		case !unshaped && mbit <= 0:
			bad("%s: mbit %d must be > 0 (set unshaped for a link at veth speed)", field, mbit)
		}
	}

	checkAsym := func(field string, mbit int, unshaped bool) {
		switch {
		case mbit < 0:
			bad("%s %d must be >= 0 (0: same as mbit)", field, mbit)
		case mbit > 0 && unshaped:
			bad("%s %d with unshaped set; an unshaped link has no rate in either direction", field, mbit)
		}
	}

	if len(t.Switches) == 0 {
		bad("switches: at least one switch is needed")
	}
	switches := map[string]bool{}
	for i, s := range t.Switches {
		field := fmt.Sprintf("switches[%d].name", i)
		checkName(field, s.Name)
		if switches[s.Name] {
			bad("%s %q: duplicate switch", field, s.Name)
		}
		switches[s.Name] = true
	}

	if len(t.Nodes) == 0 {
		bad("nodes: at least one node is needed")
	}
	if len(t.Nodes) > MaxNodes {
		bad("nodes: %d nodes, at most %d", len(t.Nodes), MaxNodes)
	}
	nodes := map[string]bool{}
	for i, n := range t.Nodes {
		field := fmt.Sprintf("nodes[%d]", i)
		checkName(field+".name", n.Name)
		if nodes[n.Name] {
			bad("%s.name %q: duplicate node", field, n.Name)
		}
		nodes[n.Name] = true
		if !switches[n.Switch] {
			bad("%s.switch %q: unknown switch", field, n.Switch)
		}
		checkRate(fmt.Sprintf("%s (%s)", field, n.Name), n.Mbit, n.Unshaped)
		checkAsym(fmt.Sprintf("%s (%s) mbit_in", field, n.Name), n.MbitIn, n.Unshaped)
		if !(n.Load >= 0 && n.Load <= 64) {
			bad("%s (%s): load %v must be between 0 and 64", field, n.Name, n.Load)
		}
	}

	// Union-find over switches: an uplink joining two switches already
	// connected closes a loop.
	parent := map[string]string{}
	var find func(string) string
	find = func(s string) string {
		if p, ok := parent[s]; ok && p != s {
			r := find(p)
			parent[s] = r
			return r
		}
		return s
	}
	for i, u := range t.Uplinks {
		field := fmt.Sprintf("uplinks[%d] (%s-%s)", i, u.A, u.B)
		known := true
		for _, end := range []string{u.A, u.B} {
			if !switches[end] {
				bad("%s: unknown switch %q", field, end)
				known = false
			}
		}
		checkRate(field, u.Mbit, u.Unshaped)
		checkAsym(field+" mbit_ba", u.MbitBA, u.Unshaped)
		if !known {
			continue
		}
		if u.A == u.B {
			bad("%s: joins a switch to itself", field)
			continue
		}
		ra, rb := find(u.A), find(u.B)
		if ra == rb {
			bad("%s: closes a loop between switches (bridges run without STP; uplinks must form a tree)", field)
			continue
		}
		parent[ra] = rb
	}

	for i, f := range t.Flows {
		field := fmt.Sprintf("flows[%d] (%s->%s)", i, f.From, f.To)
		for _, end := range []string{f.From, f.To} {
			if !nodes[end] {
				bad("%s: unknown node %q", field, end)
			}
		}
		if f.From == f.To {
			bad("%s: from and to are the same node", field)
		}
		if f.Mbit < 0 {
			bad("%s: mbit %d must be >= 0 (0 = as fast as the path allows)", field, f.Mbit)
		}
		if f.UDP && f.Mbit <= 0 {
			bad("%s: a udp flow needs its rate: set mbit above 0", field)
		}
	}

	hogged := map[string]bool{}
	for i, h := range t.Hogs {
		field := fmt.Sprintf("hogs[%d] (%s)", i, h.Node)
		if !nodes[h.Node] {
			bad("%s: unknown node %q", field, h.Node)
		}
		if hogged[h.Node] {
			bad("%s: duplicate hog for node %q; raise workers instead", field, h.Node)
		}
		hogged[h.Node] = true
		if h.Workers < 1 {
			bad("%s: workers %d must be >= 1", field, h.Workers)
		}
		if h.Nice < 0 || h.Nice > 19 {
			bad("%s: nice %d must be within 0..19", field, h.Nice)
		}
	}

	for i, c := range t.Changes {
		field := fmt.Sprintf("changes[%d] (%s)", i, c.Node)
		if !nodes[c.Node] {
			bad("%s: unknown node %q", field, c.Node)
		}
		if !(c.AtS > 0) {
			bad("%s: at_s %v must be > 0", field, c.AtS)
		}
		if c.Mbit <= 0 {
			bad("%s: mbit %d must be > 0", field, c.Mbit)
		}
		if c.MbitIn < 0 {
			bad("%s: mbit_in %d must be >= 0 (0: same as mbit)", field, c.MbitIn)
		}
	}
	for i, n := range t.JobSizes {
		if n < 1 || n > len(t.Nodes) {
			bad("job_sizes[%d]: %d ranks must be within 1..%d, the node count", i, n, len(t.Nodes))
		}
	}

	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidTopology, errors.Join(errs...))
}
