package agent_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// blockingJob is a job that records its start (job,attempt,pid in runs),
// prints a line, waits for release to exist, prints another and exits 3:
// a job whose agent restarts while it waits.
func blockingJob(runs, release string) []string {
	return []string{"sh", "-c", `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs + `; echo "begun $SHOAL_ATTEMPT"
while [ ! -e ` + release + ` ]; do sleep 0.05; done
echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,end" >> ` + runs + `; echo "ended $SHOAL_ATTEMPT"; exit 3`}
}

// An agent restarted under a running attempt (a service restart: it
// leaves supervised attempts running) adopts it: the job runs on through
// the restart, is never started again, and its end is recorded once,
// under attempt 1, with its exit code and all its output.
func TestRestartAdoptsARunningAttempt(t *testing.T) {
	if testing.Short() {
		t.Skip("restart test; skipped with -short")
	}
	t.Parallel()
	c := jobClusterOn(t, 3, false, nil)
	leader := c.WaitLeader(30 * time.Second)
	head := (leader + 1) % 3
	dir := t.TempDir()
	runs, release := filepath.Join(dir, "runs"), filepath.Join(dir, "release")
	id := submitAPI(t, c, leader, api.JobSpec{Cmd: blockingJob(runs, release), NP: 1, MaxAttempts: 3,
		Hostfile: []api.HostSlots{{Host: c.Name(head), Slots: 1}}})
	waitState(t, c, leader, id, 30*time.Second, "running")
	testcluster.WaitFor(t, 20*time.Second, "attempt 1 started and printed", func() bool {
		return len(testcluster.AttemptLines(runs, id, 1)) == 1 && strings.Contains(logOf(c, leader, id, 1), "begun 1")
	})

	c.StopForRestart(head)
	pid := jobPID(t, runs, id, 1)
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("the job's process %d died with its agent", pid)
	}
	c.Restart(head)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	j := waitState(t, c, leader, id, 60*time.Second, "done", "failed")
	if j.Attempt != 1 || len(j.Attempts) != 1 {
		t.Fatalf("job %d ran %d attempts (%s): %+v, want attempt 1 only", id, j.Attempt, j.Reason, j.Attempts)
	}
	if a := j.Attempts[0]; a.ExitCode == nil || *a.ExitCode != 3 {
		t.Errorf("attempt 1 = %s (%s), exit code %v, want the job's exit code 3", a.State, a.Reason, a.ExitCode)
	}
	if got := testcluster.AttemptLines(runs, id, 1); len(got) != 2 || got[1] != strconv.FormatUint(id, 10)+",1,end" {
		t.Errorf("attempt 1 recorded %v, want one start and one end", got)
	}
	if log := logOf(c, leader, id, 1); !strings.Contains(log, "begun 1") || !strings.Contains(log, "ended 1") {
		t.Errorf("attempt 1's log lost output across the restart:\n%s", log)
	}
}

// An agent that stays away beyond its lease: the fence guard stops the
// attempt it left running before the leader retries it elsewhere, the
// retry runs alone, and the agent's next life kills the stopped attempt
// and reports nothing of it.
func TestAbsenceBeyondTheLeaseStopsTheAttemptLeftRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("restart test; skipped with -short")
	}
	t.Parallel()
	c := jobClusterOn(t, 3, false, nil)
	leader := c.WaitLeader(30 * time.Second)
	dir := t.TempDir()
	runs, release := filepath.Join(dir, "runs"), filepath.Join(dir, "release")
	// No hostfile: the retry goes to another node.
	id := submitAPI(t, c, leader, api.JobSpec{Cmd: blockingJob(runs, release), NP: 1, MaxAttempts: 3})
	j := waitState(t, c, leader, id, 30*time.Second, "running")
	head := c.Index(j.Attempts[0].Head)
	testcluster.WaitFor(t, 20*time.Second, "attempt 1 started", func() bool {
		return len(testcluster.AttemptLines(runs, id, 1)) == 1
	})
	pid := jobPID(t, runs, id, 1)

	c.StopForRestart(head)
	if head == leader {
		leader = c.WaitLeader(30 * time.Second)
	}
	// The leader retries attempt 1 once the node's lease has surely lapsed.
	testcluster.WaitFor(t, 60*time.Second, "attempt 2 started elsewhere", func() bool {
		return len(testcluster.AttemptLines(runs, id, 2)) == 1
	})
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	j = waitState(t, c, leader, id, 60*time.Second, "done", "failed")
	if j.Attempt != 2 || j.Attempts[0].State != "failed" {
		t.Fatalf("job %d is %s at attempt %d: %+v, want attempt 2 after attempt 1 failed", id, j.State, j.Attempt, j.Attempts)
	}
	if ends := testcluster.AttemptLines(runs, id, 1); len(ends) != 1 {
		t.Fatalf("attempt 1 ran on beside its retry: %v", ends)
	}

	c.Restart(head)
	testcluster.WaitFor(t, 30*time.Second, "the stopped attempt 1 killed by the node's next life", func() bool {
		return !running(pid)
	})
	if ends := testcluster.AttemptLines(runs, id, 1); len(ends) != 1 {
		t.Errorf("attempt 1 went on after the restart: %v", ends)
	}
	j = jobState(c, leader, id)
	if j.Attempt != 2 || j.Attempts[0].State != "failed" || j.Attempts[1].ExitCode == nil || *j.Attempts[1].ExitCode != 3 {
		t.Errorf("job %d after the restart: %+v, want attempt 1 failed and attempt 2 exited 3", id, j.Attempts)
	}
}

// jobPID is the pid the job's attempt recorded in runs.
func jobPID(t *testing.T, runs string, id uint64, attempt int) int {
	t.Helper()
	lines := testcluster.AttemptLines(runs, id, attempt)
	if len(lines) == 0 {
		t.Fatalf("attempt %d of job %d recorded no start", attempt, id)
	}
	f := strings.Split(lines[0], ",")
	pid, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		t.Fatalf("start line %q: %v", lines[0], err)
	}
	return pid
}

// running reports whether pid is a process that has not exited.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}
