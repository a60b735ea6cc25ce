package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestFailover_HeadRestartedAtOnce (issue 21, item 1): SIGKILL the agent heading a running job
// and start it again on its data directory at once, faster than gossip's failure detector.
// Attempt 1 must not start a second time: each rank appends job,attempt,pid to a file, attempt
// 1 appears once per rank, and the job ends done in a later attempt.
func TestFailover_HeadRestartedAtOnce(t *testing.T) {
	l, leader := fiveNodes(t)
	var hosts []string // two nodes that are not the leader: the test is not about elections
	for _, n := range l.Nodes() {
		if n != leader && len(hosts) < 2 {
			hosts = append(hosts, n)
		}
	}
	dir := t.TempDir()
	hostfile := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hostfile, []byte(hosts[0]+":1\n"+hosts[1]+":1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "runs")
	script := `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs + `; if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 30; fi`
	out, err := l.Shoal(ctxFor(t, time.Minute), leader, "submit", "-n", "2", "-f", hostfile, "--force", "--mpi", "none",
		"--workdir", dir, "--", "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(lastLine(out)), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q, want a job ID", out)
	}
	var j api.Job
	if err := testcluster.Poll(60*time.Second, func() bool {
		j, err = l.Job(ctxFor(t, time.Minute), leader, id)
		return err == nil && j.State == "running" && len(rankLines(runs, id, 1)) == 2
	}); err != nil {
		t.Fatalf("job %d did not start both ranks: %+v %v", id, j, err)
	}
	head := j.Attempts[0].Head
	if err := l.KillAgent(head); err != nil {
		t.Fatal(err)
	}
	if err := l.StartAgent(t.Context(), head); err != nil {
		t.Fatal(err)
	}
	t.Logf("job %d: head %s killed and restarted", id, head)
	if err := testcluster.Poll(90*time.Second, func() bool {
		j, err = l.Job(ctxFor(t, time.Minute), leader, id)
		return err == nil && (j.State == "done" || j.State == "failed")
	}); err != nil {
		t.Fatalf("job %d did not end: %+v %v", id, j, err)
	}
	if first := rankLines(runs, id, 1); len(first) != 2 {
		t.Fatalf("attempt 1 started %d ranks (%v), want 2: an attempt ran twice", len(first), first)
	}
	if j.State != "done" || j.Attempt < 2 {
		t.Fatalf("job %d is %s at attempt %d (%s), want done in a later attempt: %+v", id, j.State, j.Attempt, j.Reason, j.Attempts)
	}
	for n := 2; n <= j.Attempt; n++ {
		if got := len(rankLines(runs, id, n)); got > 2 {
			t.Errorf("attempt %d started %d ranks, want at most 2", n, got)
		}
	}
	t.Logf("attempt 1: %s", j.Attempts[0].Reason)
}

// rankLines are the job,attempt,pid lines of one attempt.
func rankLines(runs string, id uint64, attempt int) []string {
	b, _ := os.ReadFile(runs)
	var out []string
	for _, l := range strings.Fields(string(b)) {
		if strings.HasPrefix(l, fmt.Sprintf("%d,%d,", id, attempt)) {
			out = append(out, l)
		}
	}
	return out
}
