package placement

import (
	"fmt"
	"strings"
)

// Why says in one sentence why the chosen group won: its T against the
// runner-up's, and which of the two terms made the difference.
func (b Breakdown) Why() string {
	var win, next *Candidate
	for i := range b.Considered {
		c := &b.Considered[i]
		switch {
		case c.Chosen && win == nil:
			win = c
		case !c.Chosen && next == nil:
			next = c
		}
	}
	if win == nil {
		return fmt.Sprintf("policy %s chose %d nodes with T = %.3f.", b.Policy, len(b.Nodes), b.T)
	}
	if next == nil {
		switch {
		case b.Candidates > 1 && (b.Policy == PolicyNetload || b.Policy == policyOracle):
			return fmt.Sprintf("%s has T = %.3f, the lowest of the %d groups policy %s evaluated.",
				group(win.Nodes), win.T, b.Candidates, b.Policy)
		case b.Candidates > 1:
			// The paper's Alg. 2 ranks its candidates by Eq. 4 over its own
			// normalisation, not by T, and keeps only the winner.
			return fmt.Sprintf("policy %s chose %s among %d groups by its own score; its T is %.3f (about 1 for an average group).",
				b.Policy, group(win.Nodes), b.Candidates, win.T)
		}
		return fmt.Sprintf("policy %s compares no groups: it chose %s, T = %.3f (about 1 for an average group).",
			b.Policy, group(win.Nodes), win.T)
	}
	n := max(b.Candidates, len(b.Considered))
	var s strings.Builder
	fmt.Fprintf(&s, "%s won with T = %.3f; the runner-up %s has T = %.3f (%d groups evaluated): ",
		group(win.Nodes), win.T, group(next.Nodes), next.T, n)
	dc := b.Alpha * (next.CNorm - win.CNorm)
	dn := b.Beta * (next.NNorm - win.NNorm)
	term, d, other := "network", dn, dc
	if dc > dn {
		term, d, other = "compute", dc, dn
	}
	switch {
	case win.T > next.T:
		// A policy other than T's minimiser (random, sequential, load).
		fmt.Fprintf(&s, "policy %s does not minimise T.", b.Policy)
	case next.T-win.T < 5e-4:
		s.WriteString("a tie to three decimals; the search keeps the first group it found.")
	case other < 0:
		fmt.Fprintf(&s, "its %s term is lower by %.3f, more than it gives up on the other (%.3f).", term, d, -other)
	default:
		fmt.Fprintf(&s, "its %s term is lower by %.3f, the other by %.3f.", term, d, other)
	}
	return s.String()
}

func group(nodes []string) string {
	const show = 6
	if len(nodes) <= show {
		return "{" + strings.Join(nodes, ", ") + "}"
	}
	return fmt.Sprintf("{%s, … %d more}", strings.Join(nodes[:show], ", "), len(nodes)-show)
}
