package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// submitTrue submits a one-process `true` job on node and returns its ID.
func submitTrue(t *testing.T, run func(node string, args ...string) (string, error), node string) uint64 {
	t.Helper()
	out, err := run(node, "submit", "-n", "1", "--force", "--mpi", "none", "--", "true")
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(lastLine(out)), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q, want a job ID", out)
	}
	return id
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestFailover_LeaderKilled: SIGKILL the leader's agent; the others elect a
// new leader, a job submitted before the crash is still known, a new job
// runs, and the old leader, restarted on its data, rejoins.
func TestFailover_LeaderKilled(t *testing.T) {
	l, leader := fiveNodes(t)
	run := func(node string, args ...string) (string, error) {
		return l.Shoal(ctxFor(t, 2*time.Minute), node, args...)
	}
	before := submitTrue(t, run, other(l.Nodes(), leader))

	if err := l.KillAgent(leader); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var rest []string
	for _, n := range l.Nodes() {
		if n != leader {
			rest = append(rest, n)
		}
	}
	newLeader, err := l.WaitConverged(t.Context(), rest, formTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %s killed; %s leads after %v", leader, newLeader, time.Since(killed).Round(time.Millisecond))

	from := other(rest, newLeader)
	j, err := l.Job(ctxFor(t, time.Minute), from, before)
	if err != nil {
		t.Fatalf("job %d submitted before the crash: %v", before, err)
	}
	t.Logf("job %d submitted before the crash: %s", before, j.State)
	r, err := l.Exec(ctxFor(t, 2*time.Minute), from, "run", "-n", "2", "--ppn", "1", "--force", "--mpi", "none", "--", "hostname")
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 0 {
		t.Fatalf("shoal run after failover: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("job after failover ran on:\n%s\nprogress:\n%s", r.Stdout, r.Stderr)
	if strings.Count(r.Stdout, "\n") != 2 {
		t.Errorf("want two hostnames from two ranks, got %q", r.Stdout)
	}
	if strings.Contains(r.Stdout, leader) {
		t.Errorf("job ran on the dead node %s:\n%s", leader, r.Stdout)
	}

	if err := l.StartAgent(t.Context(), leader); err != nil {
		t.Fatal(err)
	}
	if _, err := l.WaitFormed(t.Context(), formTimeout); err != nil {
		t.Fatal(err)
	}
	// The restarted node reads its own copy of the state, which catches up
	// from the leader's log (or a snapshot) within moments.
	catchUp := testcluster.Stretch(30 * time.Second)
	if err := testcluster.Poll(catchUp, func() bool {
		j, err := l.Job(ctxFor(t, time.Minute), leader, before)
		return err == nil && j.ID == before
	}); err != nil {
		t.Fatalf("restarted %s does not know job %d after %v", leader, before, catchUp.Round(time.Second))
	}
}

// TestPartition_MinorityCannotWrite: cut the uplink between sw1 (n1-n3, the
// voters) and sw2 (n4, n5). The minority loses its leader and refuses
// writes with a clear message; the majority goes on placing jobs; when the
// link is back everyone converges and no job is lost.
func TestPartition_MinorityCannotWrite(t *testing.T) {
	l, _ := fiveNodes(t)
	majority, minority := []string{"n1", "n2", "n3"}, []string{"n4", "n5"}
	run := func(node string, args ...string) (string, error) {
		return l.Shoal(ctxFor(t, 2*time.Minute), node, args...)
	}
	before := submitTrue(t, run, "n4")

	if err := l.TB.SetUplink(t.Context(), "sw1", "sw2", false); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	leader, err := l.WaitConverged(t.Context(), majority, formTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("majority converged on leader %s after %v", leader, time.Since(cut).Round(time.Millisecond))
	for _, n := range minority {
		err := waitNoLeader(t, l, n)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("minority has no leader after %v", time.Since(cut).Round(time.Millisecond))

	// A write on the minority fails, with a non-zero exit and a reason.
	r, err := l.Exec(ctxFor(t, time.Minute), "n5", "submit", "-n", "1", "--force", "--mpi", "none", "--", "true")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("submit on the minority: exit %d, stderr %q", r.Code, strings.TrimSpace(r.Stderr))
	if r.Code == 0 {
		t.Fatalf("submit on the minority succeeded: %s", r.Stdout)
	}
	if r.Code != 3 { // the documented exit status of "no leader right now; retry later"
		t.Errorf("submit on the minority exited %d, want 3 (no leader)", r.Code)
	}
	if !strings.Contains(strings.ToLower(r.Stderr), "leader") {
		t.Errorf("submit on the minority failed without naming the missing leader: %q", r.Stderr)
	}
	// The majority still places and runs jobs, on its own nodes only.
	r, err = l.Exec(ctxFor(t, 2*time.Minute), "n2", "run", "-n", "3", "--ppn", "1", "--force", "--mpi", "none", "--", "hostname")
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 0 {
		t.Fatalf("shoal run on the majority: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, n := range minority {
		if strings.Contains(r.Stdout, n) {
			t.Errorf("majority job ran on cut-off %s:\n%s", n, r.Stdout)
		}
	}
	during := submitTrue(t, run, "n1")

	if err := l.TB.SetUplink(t.Context(), "sw1", "sw2", true); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	if _, err := l.WaitFormed(t.Context(), formTimeout); err != nil {
		t.Fatal(err)
	}
	t.Logf("whole cluster reconverged %v after the link came back", time.Since(healed).Round(time.Millisecond))
	// A server of the minority that was out of raft's configuration longer
	// than the dead-voter grace comes back as a new non-voter and replays
	// the log; asked at once for a job it has not replayed yet, it waits
	// until its copy reaches the leader's read index and answers the job.
	for _, id := range []uint64{before, during} {
		for _, n := range []string{"n5", "n1"} {
			if j, err := l.Job(ctxFor(t, time.Minute), n, id); err != nil || j.ID != id {
				t.Errorf("%s does not know job %d after healing: %+v %v", n, id, j, err)
			}
		}
	}
	// And the minority can write again.
	after := submitTrue(t, run, "n5")
	t.Logf("jobs %d (before), %d (during), %d (after) all known", before, during, after)
}
