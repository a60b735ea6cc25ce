package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// An agent killed under a running attempt and started again at once, with its data directory,
// faster than gossip's failure detector notices: the attempt must never start twice under one
// number. The restarted node fails it with retry (node_restarted), a new attempt runs, and
// attempt 1's output on the head is kept. Each rank appends job,attempt,pid to a file; attempt 1 of
// each job must appear exactly once per rank. Once with the head killed, once a non-head.
func TestQuickRestartNeverRunsAnAttemptTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test; skipped with -short")
	}
	t.Parallel()
	// Real transports and boltdb: the restarted agent finds its raft state
	// on disk, as in production.
	c := jobClusterOn(t, 3, false, nil)
	leader := c.WaitLeader(30 * time.Second) // c.Leader() is -1 while leadership moves
	a, b := (leader+1)%3, (leader+2)%3
	for _, victim := range []string{"head", "non-head"} {
		runs := filepath.Join(t.TempDir(), "runs")
		// Attempt 1 runs until the kill; attempt 2 ends at once.
		script := `echo "start $SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$"; echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs +
			`; if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 20; fi`
		id := submitAPI(t, c, leader, api.JobSpec{Cmd: []string{"sh", "-c", script}, NP: 2, MaxAttempts: 3,
			Hostfile: []api.HostSlots{{Host: c.Name(a), Slots: 1}, {Host: c.Name(b), Slots: 1}}})
		j := waitState(t, c, leader, id, 30*time.Second, "running")
		head := j.Attempts[0].Head
		// Both ranks started, and their first lines reached the head's log.
		var first []string
		testcluster.WaitFor(t, 20*time.Second, "both ranks of attempt 1 started", func() bool {
			first = testcluster.AttemptLines(runs, id, 1)
			return len(first) == 2 && strings.Count(logOf(c, leader, id, 1), "start ") == 2
		})
		kill := c.Index(head)
		if victim == "non-head" {
			kill = a + b - kill
		}
		t.Logf("%s: job %d, head %s, restarting %s", victim, id, head, c.Name(kill))
		c.Kill(kill)
		c.Restart(kill)

		j = waitState(t, c, leader, id, 60*time.Second, "done", "failed")
		if again := testcluster.AttemptLines(runs, id, 1); len(again) != 2 {
			t.Fatalf("%s: attempt 1 of job %d started %d times (%v), want once per rank (2)", victim, id, len(again), again)
		}
		// Attempt 2 runs; on a loaded machine it may itself fail for an outside reason (a
		// co-allocation timeout) and a later one run: what matters is that none runs twice.
		if j.State != "done" || j.Attempt < 2 || j.Attempts[0].State != "failed" {
			t.Fatalf("%s: job %d is %s at attempt %d (%s), want done after attempt 1 failed: %+v", victim, id, j.State, j.Attempt, j.Reason, j.Attempts)
		}
		t.Logf("%s: attempt 1 failed: %s", victim, j.Attempts[0].Reason)
		for n := 2; n <= j.Attempt; n++ {
			if got := len(testcluster.AttemptLines(runs, id, n)); got > 2 || n == j.Attempt && got != 2 {
				t.Errorf("%s: attempt %d started %d ranks, want 2 (and never more)", victim, n, got)
			}
		}
		// The head's log of attempt 1 still holds what attempt 1's ranks printed.
		log1 := logOf(c, leader, id, 1)
		for _, l := range first {
			if !strings.Contains(log1, "start "+l) {
				t.Errorf("%s: attempt 1's log lost %q:\n%s", victim, l, log1)
			}
		}
	}
}

func logOf(c *testcluster.Cluster, i int, id uint64, attempt int) string {
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Client(i).Stream(ctx, fmt.Sprintf("/v1/jobs/%d/logs?attempt=%d", id, attempt), &buf)
	return buf.String()
}
