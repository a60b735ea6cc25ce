package e2e

import (
	"strings"
	"testing"
)

// TestFormation_FiveNamespaces: five agents in five namespaces on two
// switches find each other, agree on one leader, and have three voters.
func TestFormation_FiveNamespaces(t *testing.T) {
	l, leader := fiveNodes(t)
	for _, n := range l.Nodes() {
		ms, err := l.Members(ctxFor(t, formTimeout), n)
		if err != nil {
			t.Fatal(err)
		}
		roles := map[string]int{}
		for _, m := range ms {
			roles[m.Role]++
		}
		if roles["leader"] != 1 || roles["leader"]+roles["voter"] != 3 || roles["nonvoter"] != 2 {
			t.Errorf("%s sees roles %v (members %+v); want 1 leader, 2 voters, 2 nonvoters", n, roles, ms)
		}
	}
	// Every node reports the others' sampled state with its own hostname.
	out, err := l.Shoal(ctxFor(t, formTimeout), other(l.Nodes(), leader), "nodes")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shoal nodes:\n%s", out)
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		// Lines under the table say why a node is unconfined ("n1: confined: no (...)").
		if f := strings.Fields(l); len(f) >= 3 && !strings.HasSuffix(f[0], ":") {
			rows[f[0]] = f[2]
		}
	}
	for _, n := range l.Nodes() {
		if rows[n] != "alive" {
			t.Errorf("shoal nodes shows %s as %q, want a row with status alive", n, rows[n])
		}
	}
	if len(rows) != len(l.Nodes()) {
		t.Errorf("shoal nodes lists %d nodes, want %d", len(rows), len(l.Nodes()))
	}
}
