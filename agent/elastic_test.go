package agent_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// elasticCluster is a jobCluster whose decision layer works on the scale of seconds: it trusts a
// rate after 1.5 s and 5 iterations, resizes at most every 5 s, assumes a 2 s restart before it
// measures one, and commits progress every 250 ms.
func elasticCluster(t *testing.T, n int, tweak ...func(*agent.ElasticOptions)) *testcluster.Cluster {
	t.Helper()
	c := jobCluster(t, n, nil)
	o := agent.DefaultElasticOptions()
	o.Decision.MinWindow, o.Decision.MinIters, o.Decision.MinInterval = 1500*time.Millisecond, 5, 5*time.Second
	o.Decision.DefaultRestartCost = 2 * time.Second
	o.ProgressEvery, o.SignalEvery, o.NoProgressAfter = 250*time.Millisecond, time.Second, 2*time.Second
	for _, f := range tweak {
		f(&o)
	}
	for i := range n {
		if err := c.Agent(i).SetElasticOptions(o); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// jacobi builds examples/mpi/jacobi.c with MPICH and returns it with the output line of an
// uninterrupted single-process run of the same problem, the reference every elastic run must
// reproduce bit for bit.
func jacobi(t *testing.T, n, iters int) (bin, want string) {
	t.Helper()
	if _, err := exec.LookPath("mpicc.mpich"); err != nil {
		t.Skip("mpicc.mpich not installed (make deps installs it)")
	}
	bin = filepath.Join(t.TempDir(), "jacobi")
	if b, err := exec.Command("mpicc.mpich", "-O2", "-I../examples/mpi", "-o", bin, "../examples/mpi/jacobi.c").CombinedOutput(); err != nil {
		t.Skipf("mpicc.mpich cannot build jacobi (%v): %s", err, b)
	}
	ref := exec.Command(bin, strconv.Itoa(n), strconv.Itoa(iters))
	ref.Dir = t.TempDir()
	out, err := ref.Output()
	if err != nil || !strings.HasPrefix(string(out), "jacobi ") {
		t.Fatalf("reference run: %v: %s", err, out)
	}
	return bin, strings.TrimSpace(string(out))
}

func submitCLI(t *testing.T, c *testcluster.Cluster, i int, args ...string) uint64 {
	t.Helper()
	out, errOut, code := shoalCLI(t, c, i, append([]string{"submit"}, args...)...)
	if code != 0 {
		t.Fatalf("submit %v: exit %d: %s", args, code, errOut)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q", out)
	}
	return id
}

func logsOf(t *testing.T, c *testcluster.Cluster, i int, id uint64) (string, string) {
	t.Helper()
	out, errOut, code := shoalCLI(t, c, i, "logs", strconv.FormatUint(id, 10))
	if code != 0 {
		t.Fatalf("logs %d: exit %d: %s", id, code, errOut)
	}
	return out, errOut
}

func describe(j api.Job) string {
	s := fmt.Sprintf("job %d %s (%s)", j.ID, j.State, j.Reason)
	for _, a := range j.Attempts {
		s += fmt.Sprintf("\n  #%d %s on %s: %s", a.N, a.State, hostsOf(a), a.Reason)
		if a.Progress != nil {
			s += fmt.Sprintf(" [%d-%d]", a.Progress.FirstIter, a.Progress.Iter)
		}
	}
	if e := j.Elastic; e != nil {
		s += fmt.Sprintf("\n  elastic: iter %d/%d rate %.1f/s np %d->%d restart %.1fs decision %q", e.Iter, e.Iterations, e.Rate, e.CurrentNP, e.TargetNP, e.RestartCostS, e.Decision)
		for _, h := range e.History {
			s += fmt.Sprintf("\n  resize at attempt %d: %d -> %d: %s", h.Attempt, h.FromNP, h.ToNP, h.Reason)
		}
	}
	return s
}

// TestElasticJacobiGrowsToMeetDeadline: seed 004's experiment on a loopback cluster. Jacobi
// emulates 1.2 s of computing per iteration on one node: 80 iterations take about 54 s on 2 nodes
// once MPI's overhead per iteration is counted, more than the 50 s deadline, and about 33 s on
// 4. The decision layer grows the job; it checkpoints on SIGUSR1, exits 75, resumes on more
// nodes, meets the deadline, and prints the uninterrupted result.
// The layer grows a job to finish within Margin of the time left, so with the default 0.9 it
// picks the smallest count that just makes it, and a busy machine (which doubles MPI's overhead
// per iteration) then misses: with 0.6 s per iteration and a 21 s deadline the spare time was
// 1-3 s. Here the margin is 0.6, so the job grows to all 4 nodes and has about 17 s to spare.
// Not parallel: it asserts a wall-clock deadline, and on 2 cores other tests' MPI ranks would
// slow its own.
func TestElasticJacobiGrowsToMeetDeadline(t *testing.T) {
	const iters = 80
	bin, want := jacobi(t, 64, iters)
	c := elasticCluster(t, 4, func(o *agent.ElasticOptions) { o.Decision.Margin, o.Decision.ShrinkSlack = 0.6, 0.5 })
	deadline := 50 * time.Second
	id := submitCLI(t, c, 1, "--nodes", "2:4", "--deadline", deadline.String(), "--iterations", strconv.Itoa(iters),
		"--mpi", "mpich", "--", bin, "-w", "1200", "64", strconv.Itoa(iters))
	j := waitState(t, c, 0, id, 3*deadline, "done", "failed", "killed")
	t.Log(describe(j))
	if j.State != "done" {
		t.Fatalf("job ended %s", j.State)
	}
	out, errOut := logsOf(t, c, 2, id)
	if got := strings.TrimSpace(out); got != want {
		t.Fatalf("elastic run printed %q, uninterrupted run %q\nstderr:\n%s", got, want, errOut)
	}
	e := j.Elastic
	if len(e.History) == 0 || e.History[0].ToNP <= 2 || j.Attempts[len(j.Attempts)-1].Hosts == nil || len(j.Attempts) < 2 {
		t.Fatalf("the job was not grown:\n%s", describe(j))
	}
	if j.Attempts[0].State != "checkpointed" || j.Attempts[1].Progress == nil || j.Attempts[1].Progress.FirstIter == 0 {
		t.Fatalf("the second attempt did not resume from the checkpoint:\n%s", describe(j))
	}
	took := j.EndedAt.Sub(j.SubmittedAt)
	t.Logf("finished in %v (deadline %v) on %d processes after %d resizes; restart cost measured %.2fs",
		took.Round(10*time.Millisecond), deadline, e.CurrentNP, len(e.History), e.RestartCostS)
	if took > deadline {
		t.Fatalf("missed the deadline: %v > %v\n%s", took, deadline, describe(j))
	}
	info, _, _ := shoalCLI(t, c, 3, "job", strconv.FormatUint(id, 10))
	t.Logf("shoal job %d:\n%s", id, info)
	for _, s := range []string{"Elastic:", "Iterations:", "Nodes:", "Resizes:", "deadline", "checkpointed at iteration"} {
		if !strings.Contains(info, s) {
			t.Errorf("shoal job lacks %q:\n%s", s, info)
		}
	}
}

// TestElasticBudgetShrinks: a job started on 3 nodes whose program spends most of each
// iteration communicating (emulated) costs fewer node-hours on fewer nodes; under a budget it
// cannot keep on 3, the decision layer shrinks it, and the result is still the uninterrupted one.
// The same cluster checks the bad input of elastic flags and a program that never reports.
func TestElasticBudgetShrinks(t *testing.T) {
	t.Parallel()
	const iters = 120
	bin, want := jacobi(t, 64, iters)
	c := elasticCluster(t, 3)

	for _, bad := range [][]string{
		{"--nodes", "4:2", "--deadline", "1m", "--iterations", "10"},
		{"--nodes", "1:2", "--deadline", "-5m", "--iterations", "10"},
		{"--nodes", "1:2", "--deadline", "2001-01-01T00:00:00Z", "--iterations", "10"},
		{"--nodes", "1:2", "--deadline", "1m"},
		{"--nodes", "1:2", "--iterations", "10"},
		{"--nodes", "1:2", "--deadline", "1m", "--budget", "1", "--iterations", "10"},
		{"-n", "2", "--deadline", "1m"},
	} {
		_, errOut, code := shoalCLI(t, c, 0, append(append([]string{"submit"}, bad...), "--mpi", "none", "--", "true")...)
		if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("submit %v: exit %d, stderr %q; want exit 2 and one line", bad, code, errOut)
		}
	}
	if js, err := c.Client(0).Jobs(t.Context()); err != nil || len(js) != 0 {
		t.Fatalf("bad input changed the cluster: %d jobs (%v)", len(js), err)
	}

	// shoal progress works from inside any job, with the capability shoal puts in its environment.
	script := fmt.Sprintf("%[1]s progress --iter 3 && sleep 0.3 && %[1]s progress --iter 7 --comm 0.2", testcluster.BuildShoal(t))
	rep := submitCLI(t, c, 1, "-n", "1", "--mpi", "none", "--", "sh", "-c", script)
	if j := waitState(t, c, 0, rep, 30*time.Second, "done", "failed"); j.State != "done" || j.Attempts[0].Progress == nil || j.Attempts[0].Progress.Iter != 7 {
		t.Fatalf("shoal progress from a job: %s", describe(j))
	}

	// A program that never reports progress runs as a fixed-size job, and shoal job says why.
	silent := submitCLI(t, c, 0, "--nodes", "1:3", "--deadline", "1m", "--iterations", "10", "--mpi", "none", "--", "sleep", "30")
	var info string
	testcluster.WaitFor(t, 30*time.Second, "shoal job to say the silent job runs as a fixed size", func() bool {
		info, _, _ = shoalCLI(t, c, 1, "job", strconv.FormatUint(silent, 10))
		return strings.Contains(info, "Fixed size:") && strings.Contains(info, "no progress reported")
	}, func() string { return info })
	if err := c.Client(0).Kill(t.Context(), silent, "root"); err != nil {
		t.Fatal(err)
	}

	id := submitCLI(t, c, 2, "--nodes", "1:3", "--start", "3", "--budget", "0.004", "--iterations", strconv.Itoa(iters),
		"--mpi", "mpich", "--", bin, "-w", "60", "-m", "30", "64", strconv.Itoa(iters))
	j := waitState(t, c, 0, id, 60*time.Second, "done", "failed", "killed")
	t.Log(describe(j))
	if j.State != "done" {
		t.Fatalf("job ended %s", j.State)
	}
	if out, errOut := logsOf(t, c, 1, id); strings.TrimSpace(out) != want {
		t.Fatalf("budget run printed %q, want %q\n%s", out, want, errOut)
	}
	e := j.Elastic
	if len(e.History) == 0 || e.History[0].FromNP != 3 || e.History[0].ToNP >= 3 || !strings.Contains(e.History[0].Reason, "budget") {
		t.Fatalf("the job was not shrunk for its budget:\n%s", describe(j))
	}
	t.Logf("spent %.4f node-hours of %.4f; ended on %d processes", e.SpentNH, e.BudgetNH, e.CurrentNP)
}

// TestElasticJobResumesAfterNodeLoss: an elastic Jacobi on 3 nodes checkpoints every 10
// iterations; a node is killed under it, and the job resumes on the 2 nodes left from its last
// checkpoint (not iteration 0) rather than waiting, and still prints the uninterrupted result.
func TestElasticJobResumesAfterNodeLoss(t *testing.T) {
	t.Parallel()
	const iters = 150
	bin, want := jacobi(t, 64, iters)
	c := elasticCluster(t, 3)
	// 90 ms of computing per iteration: 4.5 s on 3 nodes, 6.8 s on 2; the deadline neither
	// needs more nodes nor leaves room to give one back.
	id := submitCLI(t, c, 0, "--nodes", "2:3", "--start", "3", "--deadline", "12s", "--iterations", strconv.Itoa(iters),
		"--max-attempts", "5", "--mpi", "mpich", "--", bin, "-c", "10", "-w", "90", "64", strconv.Itoa(iters))
	var j api.Job
	// Order, not speed: the node dies once three checkpoints were taken. 30 iterations are 2.7 s
	// of computing, but three MPI ranks busy-polling on two shared cores, beside gossip that
	// suspects live nodes and raft elections on a loaded machine, made no iteration in 30 s.
	testcluster.WaitFor(t, 2*time.Minute, "30 iterations done", func() bool {
		j = jobState(c, 0, id)
		return j.State == "running" && j.Elastic != nil && j.Elastic.Iter >= 30
	}, func() string { return describe(j) })
	cur := j.Attempts[len(j.Attempts)-1]
	victim := -1
	for _, h := range cur.Hosts {
		if i := c.Index(h.Node); i != c.Leader() && h.Node != cur.Head {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("no host is neither the leader nor the head: %s", describe(j))
	}
	t.Logf("killing %s under attempt %d at iteration %d", c.Name(victim), cur.N, j.Elastic.Iter)
	c.Kill(victim)
	observer := (victim + 1) % 3
	testcluster.WaitFor(t, 3*time.Minute, "the job to end", func() bool {
		j = jobState(c, observer, id)
		return j.State == "done" || j.State == "failed" || j.State == "killed"
	}, func() string { return describe(j) })
	t.Log(describe(j))
	if j.State != "done" {
		t.Fatalf("job ended %s", j.State)
	}
	last := j.Attempts[len(j.Attempts)-1]
	if len(last.Hosts) != 2 || strings.Contains(hostsOf(last), c.Name(victim)) {
		t.Fatalf("the last attempt should run on the 2 nodes left:\n%s", describe(j))
	}
	if last.Progress == nil || last.Progress.FirstIter < 10 {
		t.Fatalf("the job restarted from iteration 0, not from its checkpoint:\n%s", describe(j))
	}
	if out, errOut := logsOf(t, c, observer, id); strings.TrimSpace(out) != want {
		t.Fatalf("resumed run printed %q, want %q\n%s", out, want, errOut)
	}
}
