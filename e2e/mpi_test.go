package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestMPI_RunFromNonLeader: `shoal run` of a real MPICH job (UCX over TCP,
// so its traffic crosses the shaped links) submitted on a node that is not
// the leader: one rank on each of two nodes, each rank on its own host.
func TestMPI_RunFromNonLeader(t *testing.T) {
	ring := buildRing(t)
	l, leader := fiveNodes(t)
	from := other(l.Nodes(), leader)
	start := time.Now()
	r, err := l.Exec(ctxFor(t, 3*time.Minute), from, "run", "-n", "2", "--ppn", "1", "--force", "--mpi", "mpich",
		"--env", "UCX_TLS=tcp", "--", ring, "5")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shoal run from %s (leader %s) took %v, exit %d\nstdout:\n%s\nstderr:\n%s", from, leader,
		time.Since(start).Round(time.Millisecond), r.Code, r.Stdout, r.Stderr)
	if r.Code != 0 {
		t.Fatalf("shoal run exited %d", r.Code)
	}
	hosts := map[string]bool{}
	for _, line := range strings.Split(r.Stdout, "\n") {
		// "rank R of 2 on HOST (shoal node NODE)"
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == "rank" && f[4] == "on" {
			hosts[f[5]] = true
		}
	}
	if len(hosts) != 2 {
		t.Errorf("ranks ran on hosts %v; want two different nodes", hosts)
	}
	if !strings.Contains(r.Stdout, "token") && !strings.Contains(r.Stdout, "sum") {
		t.Errorf("no result line from rank 0 in:\n%s", r.Stdout)
	}
}
