package e2e

import (
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestFormation_FiveNamespaces: five agents in five namespaces on two
// switches find each other, agree on one leader, and have three voters.
func TestFormation_FiveNamespaces(t *testing.T) {
	l, leader := fiveNodes(t)
	// The bootstrap set is the three voters; the leader then makes two
	// more agents warm non-voters (servers that do not vote), a few rounds later.
	for _, n := range l.Nodes() {
		var roles map[string]int
		var ms []api.Member
		var err error
		if testcluster.Poll(formTimeout, func() bool {
			ms, err = l.Members(ctxFor(t, formTimeout), n)
			roles = map[string]int{}
			for _, m := range ms {
				roles[m.Role]++
			}
			return err == nil && roles["leader"] == 1 && roles["leader"]+roles["voter"] == 3 && roles["nonvoter"] == 2
		}) != nil {
			t.Errorf("%s sees roles %v (members %+v, err %v); want 1 leader, 2 voters, 2 nonvoters", n, roles, ms, err)
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
