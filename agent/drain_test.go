package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// nodeDrain reads one node's drain as `shoal nodes --json` prints it.
func nodeDrain(t *testing.T, c *testcluster.Cluster, i int, node string) string {
	t.Helper()
	out, errOut, code := shoalCLI(t, c, i, "nodes", "--json")
	if code != 0 {
		t.Fatalf("shoal nodes --json: exit %d: %s", code, errOut)
	}
	var ns []api.Node
	if err := json.Unmarshal([]byte(out), &ns); err != nil {
		t.Fatalf("shoal nodes --json: %v\n%s", err, out)
	}
	for _, n := range ns {
		if n.Name == node {
			return n.Drain
		}
	}
	t.Fatalf("shoal nodes shows no %s:\n%s", node, out)
	return ""
}

func onNode(a api.Attempt, node string) bool {
	return slices.ContainsFunc(a.Hosts, func(h api.JobHost) bool { return h.Node == node })
}

// Drain: a drained node takes no new job while the others do,
// and the job running there finishes; with a deadline the job left there
// is requeued and completes elsewhere; undrain restores the node. Bad
// input changes nothing.
func TestDrainNode(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	n0, n1, n2 := c.Name(0), c.Name(1), c.Name(2)
	dir := t.TempDir()
	release := filepath.Join(dir, "release")

	// Bad input: one line, exit 2, nothing drained.
	for _, args := range [][]string{
		{"node", "drain", "nosuch"},
		{"node", "drain", n2, "--deadline", "soon"},
		{"node", "drain", n2, "--deadline", "-5m"},
		{"node", "drain"},
		{"node", "undrain", "nosuch"},
	} {
		out, errOut, code := shoalCLI(t, c, 0, args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || errOut == "" {
			t.Errorf("shoal %v: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", args, code, out, errOut)
		}
	}
	if d := nodeDrain(t, c, 1, n2); d != "" {
		t.Fatalf("after refused drains %s shows drain %q, want \"\"", n2, d)
	}

	// A job running on n2 (its hostfile puts it there) until released.
	held := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sh", "-c", "while [ ! -e " + release + " ]; do sleep 0.1; done"},
		NP: 1, Relax: "none", Hostfile: []api.HostSlots{{Host: n2, Slots: 1}}})
	waitState(t, c, 0, held, 30*time.Second, "running")

	out, errOut, code := shoalCLI(t, c, 1, "node", "drain", n2)
	if code != 0 || !strings.Contains(out, "draining") {
		t.Fatalf("shoal node drain %s: exit %d\n%s%s", n2, code, out, errOut)
	}
	if d := nodeDrain(t, c, 1, n2); d != "draining" { // read where the drain was applied
		t.Fatalf("%s with a job running shows drain %q, want draining", n2, d)
	}
	out, _, _ = shoalCLI(t, c, 1, "nodes")
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == n2 && f[len(f)-2] != "draining" {
			t.Errorf("shoal nodes row of %s: %q, want DRAIN draining before ROLE", n2, l)
		} else if len(f) > 0 && f[0] == n0 && f[len(f)-2] != "-" {
			t.Errorf("shoal nodes row of %s: %q, want DRAIN - before ROLE", n0, l)
		}
	}
	// The drain is raft's: it survives a leader change, and the new
	// leader places nothing on n2 either.
	old := c.Leader()
	if err := c.Agent(old).Raft().LeadershipTransfer().Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	testcluster.WaitFor(t, 30*time.Second, "a new leader", func() bool { l := c.Leader(); return l >= 0 && l != old })
	if d := nodeDrain(t, c, c.Leader(), n2); d != "draining" {
		t.Fatalf("after the leader change %s shows drain %q, want draining", n2, d)
	}
	// New jobs run, none on n2; a job that asks for n2 waits.
	pinned := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1, Relax: "none", Hostfile: []api.HostSlots{{Host: n2, Slots: 1}}})
	var others []uint64
	for range 4 {
		others = append(others, submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 2}))
	}
	for _, id := range others {
		j := waitState(t, c, 0, id, 30*time.Second, "done")
		for _, a := range j.Attempts {
			if onNode(a, n2) {
				t.Errorf("job %d ran on drained %s: %+v", id, n2, a)
			}
		}
	}
	if j := jobState(c, 0, pinned); j.State != "queued" || !strings.Contains(j.Reason+j.WaitReason, "drained") {
		t.Errorf("job pinned to drained %s: %s (%q %q), want queued, waiting for the drain", n2, j.State, j.Reason, j.WaitReason)
	}
	// The running job finishes there; then the node is drained.
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := waitState(t, c, 0, held, 30*time.Second, "done"); len(j.Attempts) != 1 || !onNode(j.Attempts[0], n2) {
		t.Errorf("held job: attempts %+v, want one, on %s", j.Attempts, n2)
	}
	testcluster.WaitFor(t, 10*time.Second, n2+" drained", func() bool { return nodeDrain(t, c, 1, n2) == "drained" })

	// With a deadline: a job left on n2 is requeued and completes elsewhere.
	// n0 and n1 are drained a moment so that the job lands on n2.
	for _, n := range []string{n0, n1} {
		if _, err := c.Client(0).Drain(context.Background(), n, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Client(0).Undrain(context.Background(), n2); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, 0, pinned, 30*time.Second, "done") // undrain restores n2: the pinned job runs
	marker := filepath.Join(dir, "first-attempt")
	stuck := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sh", "-c", fmt.Sprintf("[ -e %s ] && exit 0; touch %s; sleep 600", marker, marker)}, NP: 1})
	j := waitState(t, c, 0, stuck, 30*time.Second, "running")
	if !onNode(j.Attempts[0], n2) {
		t.Fatalf("job %d runs on %+v, want %s (the others are drained)", stuck, j.Attempts[0].Hosts, n2)
	}
	for _, n := range []string{n0, n1} {
		if _, err := c.Client(1).Undrain(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code = shoalCLI(t, c, 0, "node", "drain", n2, "--deadline", "2s")
	if code != 0 || !strings.Contains(out, "requeued") {
		t.Fatalf("shoal node drain --deadline: exit %d\n%s%s", code, out, errOut)
	}
	j = waitState(t, c, 1, stuck, 60*time.Second, "done")
	if len(j.Attempts) != 2 || !strings.Contains(j.Attempts[0].Reason, "drained") || onNode(j.Attempts[1], n2) {
		t.Fatalf("job past the drain deadline: attempts %+v, want the first failed by the drain and the second off %s", j.Attempts, n2)
	}
	testcluster.WaitFor(t, 10*time.Second, n2+" drained", func() bool { return nodeDrain(t, c, 2, n2) == "drained" })

	// Undrain restores it: a job pinned to n2 runs there.
	if out, errOut, code := shoalCLI(t, c, 2, "node", "undrain", n2); code != 0 || !strings.Contains(out, "in service") {
		t.Fatalf("shoal node undrain: exit %d\n%s%s", code, out, errOut)
	}
	testcluster.WaitFor(t, 10*time.Second, n2+" in service on every node", func() bool {
		return nodeDrain(t, c, 0, n2) == "" && nodeDrain(t, c, 1, n2) == ""
	})
	again := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1, Relax: "none", Hostfile: []api.HostSlots{{Host: n2, Slots: 1}}})
	waitState(t, c, 0, again, 30*time.Second, "done")
}
