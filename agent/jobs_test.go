package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// idle is a sampler of an idle node: zero load, so each test node offers
// exactly its 8 logical cores as slots whatever the machine is doing.
type idle struct{}

func (idle) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), MemAvail: 8 << 30}, nil
}

// jobCluster starts n agents that run jobs (a built shoal binary,
// idle samplers, in-process probes) and waits until all are in raft.
// Their gossip and raft run on in-memory twins: these tests are about jobs,
// and the transports have tests of their own on sockets, TLS and boltdb
// (the set package testcluster's doc names; the restart, snapshot and
// exactly-once tests call jobClusterOn with real transports).
func jobCluster(t *testing.T, n int, configure func(i int, c *agent.Config)) *testcluster.Cluster {
	t.Helper()
	return jobClusterOn(t, n, true, configure)
}

// jobClusterOn is jobCluster with gossip and raft on in-memory twins
// (testcluster.Options.Twins) when twins is set, on sockets, TLS and
// boltdb when not.
func jobClusterOn(t *testing.T, n int, twins bool, configure func(i int, c *agent.Config)) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, n, testcluster.Options{
		Twins:   twins,
		Bin:     testcluster.BuildShoal(t),
		Sampler: func(int) probe.Sampler { return idle{} },
		Configure: func(i int, cfg *agent.Config) {
			// Long enough for a loaded 2-core machine to reserve (3 s was
			// not, under two busy loops), short enough for the tests of a
			// node that never acknowledges.
			cfg.CoallocTimeout = testcluster.Stretch(6 * time.Second)
			cfg.Probes.InProcess = true
			if configure != nil {
				configure(i, cfg)
			}
		},
	})
	c.WaitLeader(45 * time.Second)
	testcluster.WaitFor(t, 15*time.Second, "every node in raft", func() bool {
		ms, err := c.Client(0).Members(context.Background())
		if err != nil {
			return false
		}
		for _, m := range ms {
			if m.Role == "none" {
				return false
			}
		}
		return len(ms) == n
	})
	return c
}

// shoalCLI runs the real CLI against node i and returns stdout, stderr and
// the exit code.
func shoalCLI(t *testing.T, c *testcluster.Cluster, i int, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testcluster.BuildShoal(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SHOAL_ADDR="+c.Client(i).Base, "SHOAL_TOKEN="+c.Token(),
		"SHOAL_AGENTS_CACHE="+filepath.Join(cmd.Dir, "agents.json"))
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run shoal %v: %v", args, err)
	}
	return so.String(), se.String(), code
}

// ring compiles examples/mpi/ring.c with the given MPI flavour's mpicc,
// skipping the test when that flavour is not installed.
func ring(t *testing.T, flavour string) string {
	t.Helper()
	mpicc := "mpicc." + flavour
	if _, err := exec.LookPath(mpicc); err != nil {
		t.Skipf("%s not installed (make deps installs it)", mpicc)
	}
	out := filepath.Join(t.TempDir(), "ring-"+flavour)
	if b, err := exec.Command(mpicc, "-O2", "-o", out, "../examples/mpi/ring.c").CombinedOutput(); err != nil {
		t.Skipf("%s cannot build the ring (%v): %s", mpicc, err, b)
	}
	return out
}

func submitAPI(t *testing.T, c *testcluster.Cluster, i int, spec api.JobSpec) uint64 {
	t.Helper()
	if spec.MaxAttempts == 0 {
		spec.MaxAttempts = 3
	}
	if spec.Workdir == "" {
		spec.Workdir = os.TempDir()
	}
	if spec.MPI == "" {
		spec.MPI = "none"
	}
	res, err := c.Client(i).Submit(context.Background(), api.SubmitRequest{
		RequestID: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), Owner: "root", Spec: spec})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return res.ID
}

func jobState(c *testcluster.Cluster, i int, id uint64) api.Job {
	j, _ := c.Client(i).Job(context.Background(), id)
	return j
}

func waitState(t *testing.T, c *testcluster.Cluster, i int, id uint64, d time.Duration, states ...string) api.Job {
	t.Helper()
	var j api.Job
	testcluster.WaitFor(t, d, fmt.Sprintf("job %d to be %v", id, states), func() bool {
		j = jobState(c, i, id)
		for _, s := range states {
			if j.State == s {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("job is %s (%s) attempts %+v", j.State, j.Reason, j.Attempts) })
	return j
}

func TestRunMPICHRingAcrossThreeAgents(t *testing.T) {
	t.Parallel()
	bin := ring(t, "mpich")
	c := jobCluster(t, 3, nil)
	// From a non-leader node, as a user would.
	from := (c.Leader() + 1) % 3
	out, errOut, code := shoalCLI(t, c, from, "run", "-n", "6", "--ppn", "2", "--", bin, "3")
	if code != 0 {
		t.Fatalf("shoal run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "ring token 18 (want 18), allreduce 21 (want 21): ok") {
		t.Fatalf("ring output wrong:\n%s", out)
	}
	// Every rank knows its own node, the head's included.
	for _, n := range []string{"n0", "n1", "n2"} {
		if strings.Count(out, "(shoal node "+n+")") != 2 {
			t.Errorf("no rank ran on %s:\n%s", n, out)
		}
	}
	for _, p := range []string{"submitted", "placed on", "done, exit code 0"} {
		if !strings.Contains(errOut, p) {
			t.Errorf("progress lacks %q:\n%s", p, errOut)
		}
	}
	// A failing program's exit code comes back as shoal run's.
	_, _, code = shoalCLI(t, c, from, "run", "-n", "2", "--mpi", "none", "--", "sh", "-c", "exit 7")
	if code != 7 {
		t.Fatalf("exit code %d, want the job's 7", code)
	}
}

// TestRunOpenMPIRing runs Open MPI through shoal rsh on three agents that
// share this machine, so the three orteds of the job share its hostname: each
// must get a session directory of its own (ompi.go), or one deletes another's
// as it starts and mpirun waits forever for the daemon that died. The job's
// --timeout turns such a hang into a failure rather than a stalled suite.
func TestRunOpenMPIRing(t *testing.T) {
	t.Parallel()
	bin := ring(t, "openmpi")
	c := jobCluster(t, 3, nil)
	out, errOut, code := shoalCLI(t, c, 1, "run", "-n", "3", "--ppn", "1", "--timeout", "2m", "--", bin, "2")
	if code != 0 || !strings.Contains(out, "ring token 6 (want 6), allreduce 6 (want 6): ok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestSubmitThenLogs(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	out, errOut, code := shoalCLI(t, c, 2, "submit", "-n", "3", "--mpi", "none", "--", "sh", "-c", "echo hello from $SHOAL_RANK; echo oops >&2")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errOut)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q, want only the job ID", out)
	}
	waitState(t, c, 0, id, 30*time.Second, "done")
	logs, logErr, code := shoalCLI(t, c, 0, "logs", strconv.FormatUint(id, 10))
	if code != 0 || strings.Count(logs, "hello from") != 3 || strings.Count(logErr, "oops") != 3 {
		t.Fatalf("logs: exit %d\nstdout:\n%s\nstderr:\n%s", code, logs, logErr)
	}
	waitState(t, c, 1, id, 10*time.Second, "done") // node 1 reads its own replica, which may lag node 0's
	js, _, _ := shoalCLI(t, c, 1, "job", "--json", strconv.FormatUint(id, 10))
	for _, field := range []string{`"id"`, `"state": "done"`, `"exit_code": 0`, `"attempt": 1`, `"hosts"`, `"degraded"`, `"submitted_at"`, `"started_at"`, `"ended_at"`} {
		if !strings.Contains(js, field) {
			t.Errorf("shoal job --json lacks %s:\n%s", field, js)
		}
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestKillStopsEveryRankOnEveryNode(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	id := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sleep", "300"}, NP: 3, PPN: 1})
	waitState(t, c, 0, id, 30*time.Second, "running")
	var pids []int
	testcluster.WaitFor(t, 10*time.Second, "a sleep on every node", func() bool {
		pids = nil
		for i := range 3 {
			ps := c.Agent(i).JobPIDs(id)
			if len(ps) == 0 {
				return false
			}
			pids = append(pids, ps...)
		}
		return true
	})
	if err := c.Client(1).Kill(context.Background(), id, "root"); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, 0, id, 10*time.Second, "killed")
	testcluster.WaitFor(t, 10*time.Second, "every rank's process gone", func() bool {
		for _, p := range pids {
			if alive(p) {
				return false
			}
		}
		return true
	})
	// Someone else may not kill a job.
	id2 := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sleep", "300"}, NP: 1})
	waitState(t, c, 0, id2, 30*time.Second, "running")
	if err := c.Client(0).Kill(context.Background(), id2, "mallory"); err == nil {
		t.Fatal("a user killed root's job")
	}
	if j := jobState(c, 0, id2); j.State != "running" {
		t.Fatalf("refused kill changed the job: %s", j.State)
	}
}

func TestOversubscribeWaitAndImmediate(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	// 3 idle nodes x 8 slots = 24. 30 processes oversubscribe, and say so.
	out, errOut, code := shoalCLI(t, c, 0, "run", "-n", "30", "--mpi", "none", "--", "true")
	if code != 0 || !strings.Contains(errOut, "degraded") {
		t.Fatalf("oversubscribed run: exit %d, stderr:\n%s%s", code, errOut, out)
	}
	// Fill the cluster, then a --no-oversubscribe job waits until it ends.
	big := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sleep", "300"}, NP: 24})
	waitState(t, c, 0, big, 30*time.Second, "running")
	small := submitAPI(t, c, 1, api.JobSpec{Cmd: []string{"true"}, NP: 2})
	if j := waitState(t, c, 0, small, 5*time.Second, "queued"); j.Attempt != 0 {
		t.Fatal("the waiting job was placed")
	}
	// An immediate job cannot start now and fails at once with the reason.
	_, errOut, code = shoalCLI(t, c, 2, "run", "-n", "2", "--no-oversubscribe", "--immediate", "--mpi", "none", "--", "true")
	if code == 0 || !strings.Contains(errOut, "immediate") {
		t.Fatalf("immediate job: exit %d, stderr:\n%s", code, errOut)
	}
	if j := jobState(c, 0, small); j.State != "queued" {
		t.Fatalf("small job is %s while the cluster is full", j.State)
	}
	c.Client(0).Kill(context.Background(), big, "root")
	waitState(t, c, 0, small, 30*time.Second, "done")
	// Larger than the whole cluster without oversubscription: refused at submit, with the numbers.
	_, errOut, code = shoalCLI(t, c, 0, "submit", "-n", "100", "--no-oversubscribe", "--mpi", "none", "--", "true")
	if code == 0 || !strings.Contains(errOut, "100 processes") || !strings.Contains(errOut, "24 slots") {
		t.Fatalf("oversized job: exit %d, stderr:\n%s", code, errOut)
	}
}

func TestNodeThatNeverAcksIsAvoided(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, func(i int, cfg *agent.Config) { cfg.Testing.NeverAck = i == 2 })
	// Hostfile-free job for all 3 nodes' worth of one slot each: n2 gets
	// a share, never reserves, and the retry runs on n0 and n1.
	id := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 3, PPN: 1, Oversubscribe: true})
	j := waitState(t, c, 0, id, 40*time.Second, "done", "failed")
	if j.State != "done" || j.Attempt != 2 {
		t.Fatalf("job %s after %d attempts: %s %+v", j.State, j.Attempt, j.Reason, j.Attempts)
	}
	if !strings.Contains(j.Attempts[0].Reason, "co-allocation timed out") || strings.Contains(hostsOf(j.Attempts[1]), "n2") {
		t.Fatalf("attempts: %+v", j.Attempts)
	}
}

func hostsOf(a api.Attempt) string {
	var s []string
	for _, h := range a.Hosts {
		s = append(s, h.Node)
	}
	return strings.Join(s, ",")
}

func TestAgentKilledUnderRunningJobRequeues(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 4, nil)
	logf := filepath.Join(t.TempDir(), "runs")
	// Attempt 1 sleeps long; attempt 2 finishes at once.
	script := `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$SHOAL_RANK" >> ` + logf + `; [ "$SHOAL_ATTEMPT" = 1 ] && sleep 300; exit 0`
	id := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sh", "-c", script}, NP: 2, PPN: 1})
	j := waitState(t, c, 0, id, 30*time.Second, "running")
	victim := c.Index(j.Hosts[len(j.Hosts)-1].Node)
	if victim == c.Leader() {
		victim = c.Index(j.Hosts[0].Node)
	}
	c.Kill(victim)
	observer := (victim + 1) % 4
	for observer == victim {
		observer = (observer + 1) % 4
	}
	j = waitState(t, c, observer, id, 60*time.Second, "done", "failed")
	if j.State != "done" || j.Attempt != 2 || strings.Contains(hostsOf(j.Attempts[1]), c.Name(victim)) {
		t.Fatalf("after killing %s: %s attempt %d %+v", c.Name(victim), j.State, j.Attempt, j.Attempts)
	}
	b, _ := os.ReadFile(logf)
	if strings.Count(string(b), fmt.Sprintf("%d,2,", id)) != 2 {
		t.Fatalf("attempt 2 should have run both ranks once:\n%s", b)
	}
}

// TestReadYourWritesOnAFollower: a job submitted through an agent that is not the leader is
// visible on that agent as soon as the submit returns. The leader commits the write before the
// follower has applied it; an agent that answered at once would make `id=$(shoal submit ...);
// shoal job $id` fail with "no job" on the very agent the user talks to.
func TestReadYourWritesOnAFollower(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	follower := (c.Leader() + 1) % 3
	cl := c.Client(follower)
	ctx := context.Background()
	for i := range 30 {
		res, err := cl.Submit(ctx, api.SubmitRequest{RequestID: fmt.Sprintf("ryw-%d", i), Owner: "root",
			Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none"}})
		if err != nil {
			t.Fatalf("submit %d through %s: %v", i, c.Name(follower), err)
		}
		if _, err := cl.Job(ctx, res.ID); err != nil {
			t.Fatalf("job %d submitted through %s is not visible there right after the submit: %v", res.ID, c.Name(follower), err)
		}
	}
}
