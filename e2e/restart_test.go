package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
	"github.com/shoal-hpc/shoal/testcluster/lab"
)

// TestFailover_HeadRestartedAtOnce: SIGKILL the agent heading a running job
// and start it again on its data directory at once, faster than gossip's failure detector;
// first a head that is not the leader, then the leader heading a job. Attempt 1 must not start
// a second time: each rank appends job,attempt,pid to a file, attempt 1 appears once per rank,
// and the job ends done in a later attempt.
func TestFailover_HeadRestartedAtOnce(t *testing.T) {
	l, leader := fiveNodes(t)
	var others []string
	for _, n := range l.Nodes() {
		if n != leader {
			others = append(others, n)
		}
	}
	headRestartedAtOnce(t, l, others[3], []string{others[0], others[1]})
	// The leader heads the next job (the first host of a hostfile is the head).
	headRestartedAtOnce(t, l, others[3], []string{leader, others[2]})
}

// headRestartedAtOnce runs a two-rank job on hosts (the first one heads it), kills the head's
// agent once both ranks run and starts it again at once, and checks that no attempt ran twice.
// ask is a node that stays up, for the job's state.
func headRestartedAtOnce(t *testing.T, l *lab.Lab, ask string, hosts []string) {
	t.Helper()
	dir := t.TempDir()
	hostfile := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hostfile, []byte(hosts[0]+":1\n"+hosts[1]+":1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "runs")
	script := `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs + `; if [ "$SHOAL_ATTEMPT" = 1 ]; then sleep 30; fi`
	out, err := l.Shoal(ctxFor(t, time.Minute), ask, "submit", "-n", "2", "-f", hostfile, "--relax", "none", "--force",
		"--mpi", "none", "--workdir", dir, "--", "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(lastLine(out)), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q, want a job ID", out)
	}
	var j api.Job
	if err := testcluster.Poll(testcluster.Stretch(60*time.Second), func() bool {
		j, err = l.Job(ctxFor(t, time.Minute), ask, id)
		return err == nil && j.State == "running" && len(testcluster.AttemptLines(runs, id, 1)) == 2
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
	t.Logf("job %d on %v: head %s killed and restarted", id, hosts, head)
	if err := testcluster.Poll(testcluster.Stretch(90*time.Second), func() bool {
		j, err = l.Job(ctxFor(t, time.Minute), ask, id)
		return err == nil && (j.State == "done" || j.State == "failed")
	}); err != nil {
		t.Fatalf("job %d did not end: %+v %v", id, j, err)
	}
	if first := testcluster.AttemptLines(runs, id, 1); len(first) != 2 {
		t.Fatalf("job %d: attempt 1 started %d ranks (%v), want 2: an attempt ran twice", id, len(first), first)
	}
	if j.State != "done" || j.Attempt < 2 {
		t.Fatalf("job %d is %s at attempt %d (%s), want done in a later attempt: %+v", id, j.State, j.Attempt, j.Reason, j.Attempts)
	}
	for n := 2; n <= j.Attempt; n++ {
		if got := len(testcluster.AttemptLines(runs, id, n)); got > 2 {
			t.Errorf("job %d: attempt %d started %d ranks, want at most 2", id, n, got)
		}
	}
	t.Logf("job %d, attempt 1: %s", id, j.Attempts[0].Reason)
}
