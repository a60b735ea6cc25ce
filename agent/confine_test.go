package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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

// Confinement with real processes in real cgroups: these need
// root, as the agents they start do.

func needRootCgroups(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: agents confine jobs in cgroups")
	}
}

// escaper is a job that starts a process which leaves its process group
// and session (setsid), is orphaned (double fork) and has none of shoal's
// variables (env -i), writes its pid to pidFile and sleeps; then the job
// itself runs then.
func escaper(pidFile, then string) []string {
	return []string{"sh", "-c", fmt.Sprintf(
		`setsid sh -c 'env -i /bin/sh -c "echo \$\$ > %s.tmp && mv %s.tmp %s && exec sleep 300" &'; `+
			`while [ ! -s %s ]; do sleep 0.05; done; %s`, pidFile, pidFile, pidFile, pidFile, then)}
}

func readPid(t *testing.T, f string) int {
	t.Helper()
	var pid int
	testcluster.WaitFor(t, 30*time.Second, "the escaper's pid in "+f, func() bool {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// noEnvMarker checks that the escapee really has no SHOAL_ variable: the
// sweep's marker cannot find it, only the cgroup can.
func noEnvMarker(t *testing.T, pid int) {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatalf("escaper %d: %v", pid, err)
	}
	if strings.Contains(string(env), "SHOAL_") {
		t.Fatalf("escaper %d still has shoal's variables: %q", pid, env)
	}
}

func jobJSON(t *testing.T, c *testcluster.Cluster, id uint64) api.Job {
	t.Helper()
	out, errOut, code := shoalCLI(t, c, 0, "job", "--json", strconv.FormatUint(id, 10))
	if code != 0 {
		t.Fatalf("shoal job --json %d: exit %d: %s", id, code, errOut)
	}
	var j api.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("shoal job --json: %v\n%s", err, out)
	}
	return j
}

// waitUsage waits for every node of the job's last attempt to have
// recorded its usage, as `shoal job --json` shows it.
func waitUsage(t *testing.T, c *testcluster.Cluster, id uint64) api.Attempt {
	t.Helper()
	var a api.Attempt
	testcluster.WaitFor(t, 20*time.Second, fmt.Sprintf("job %d's usage recorded", id), func() bool {
		j := jobJSON(t, c, id)
		if len(j.Attempts) == 0 {
			return false
		}
		a = j.Attempts[len(j.Attempts)-1]
		return len(a.Usage) == len(a.Hosts) && a.Total != nil
	}, func() string { return fmt.Sprintf("%+v", a) })
	return a
}

// TestConfinedJobs runs on one confining node: escapees die with their
// attempt (killed, or failed), a job past its --mem is OOM-killed with the
// reason while another job on the node completes, usage matches what jobs
// did, the CPU quota holds a busy job to its CPUs, and bad input is
// refused before anything is queued.
func TestConfinedJobs(t *testing.T) {
	t.Parallel()
	needRootCgroups(t)
	c := jobCluster(t, 1, nil)
	if ok, why := c.Agent(0).Confined(); !ok {
		t.Fatalf("the agent does not confine: %s", why)
	}
	dir := t.TempDir()

	t.Run("kill reaches an escapee", func(t *testing.T) {
		pf := filepath.Join(dir, "kill.pid")
		id := submitAPI(t, c, 0, api.JobSpec{Cmd: escaper(pf, "sleep 300"), NP: 1})
		pid := readPid(t, pf)
		noEnvMarker(t, pid)
		if _, errOut, code := shoalCLI(t, c, 0, "kill", strconv.FormatUint(id, 10)); code != 0 {
			t.Fatalf("shoal kill: exit %d: %s", code, errOut)
		}
		testcluster.WaitFor(t, 20*time.Second, fmt.Sprintf("escaper %d gone after shoal kill", pid), func() bool { return !alive(pid) })
	})

	t.Run("a failed attempt takes its escapee", func(t *testing.T) {
		pf := filepath.Join(dir, "fail.pid")
		id := submitAPI(t, c, 0, api.JobSpec{Cmd: escaper(pf, "exit 3"), NP: 1})
		pid := readPid(t, pf)
		noEnvMarker(t, pid)
		j := waitState(t, c, 0, id, 30*time.Second, "failed")
		if j.ExitCode == nil || *j.ExitCode != 3 {
			t.Errorf("job %s exit %v, want failed with exit 3", j.State, j.ExitCode)
		}
		testcluster.WaitFor(t, 20*time.Second, fmt.Sprintf("escaper %d gone after its attempt failed", pid), func() bool { return !alive(pid) })
	})

	t.Run("OOM kills only its own job", func(t *testing.T) {
		other := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"sh", "-c", "sleep 4; echo survived"}, NP: 1})
		// Touch 300 MiB (a bytes object is written, unlike a zeroed bytearray).
		out, errOut, code := shoalCLI(t, c, 0, "run", "-n", "1", "--mpi", "none", "--mem", "64M", "--",
			"/usr/bin/python3", "-c", "b = b'x' * (300 << 20); print(len(b))")
		if code == 0 {
			t.Fatalf("a job touching 300 MiB under --mem 64M succeeded:\n%s\n%s", out, errOut)
		}
		want := "out of memory on " + c.Name(0) + " (limit 64M, peak "
		if !strings.Contains(errOut, want) {
			t.Errorf("shoal run's stderr lacks %q:\n%s", want, errOut)
		}
		js, err := c.Client(0).JobsWhere(context.Background(), api.JobsQuery{States: []string{"failed"}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, j := range js {
			if j.Spec.MemPerNode == 64<<20 {
				found = true
				if !strings.HasPrefix(j.Reason, want) || j.Attempt != 1 {
					t.Errorf("OOM job: reason %q after %d attempt(s), want %q... and no retry", j.Reason, j.Attempt, want)
				}
				text, _, _ := shoalCLI(t, c, 0, "job", strconv.FormatUint(j.ID, 10))
				if !strings.Contains(text, want) {
					t.Errorf("shoal job lacks the OOM reason:\n%s", text)
				}
			}
		}
		if !found {
			t.Fatalf("no failed job with --mem 64M among %d", len(js))
		}
		if j := waitState(t, c, 0, other, 30*time.Second, "done", "failed"); j.State != "done" {
			t.Fatalf("the other job on the node: %s (%s), want done", j.State, j.Reason)
		}
		if !agentAnswers(c) {
			t.Fatal("the agent stopped answering after the OOM kill")
		}
	})

	t.Run("usage matches what the job did", func(t *testing.T) {
		id := submitAPI(t, c, 0, api.JobSpec{NP: 1, Cmd: []string{"/usr/bin/python3", "-c",
			"import time\nb = b'x' * (100 << 20)\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"}})
		waitState(t, c, 0, id, 60*time.Second, "done")
		a := waitUsage(t, c, id)
		u := a.Usage[0]
		t.Logf("usage of a job touching 100 MiB and spinning 1 s of CPU: %+v", u)
		if u.CPUSeconds < 0.9 || u.MaxRSSBytes < 100<<20 || u.MaxRSSBytes > 150<<20 || u.Node != c.Name(0) {
			t.Errorf("usage %+v: want cpu_seconds >= 0.9 and max_rss_bytes in [100,150] MiB on %s", u, c.Name(0))
		}
		if a.Total.CPUSeconds != u.CPUSeconds || a.Total.MaxRSSBytes != u.MaxRSSBytes {
			t.Errorf("total %+v differs from the one node's %+v", *a.Total, u)
		}
		text, _, _ := shoalCLI(t, c, 0, "job", strconv.FormatUint(id, 10))
		if !strings.Contains(text, "max rss") {
			t.Errorf("shoal job shows no usage:\n%s", text)
		}
	})

	t.Run("a busy job gets its CPUs", func(t *testing.T) {
		// Three spinning processes, one rank with one CPU: the quota holds them to one core.
		id := submitAPI(t, c, 0, api.JobSpec{NP: 1, CPUsPerRank: 1, Cmd: []string{"sh", "-c",
			`for i in 1 2 3; do timeout 4 sh -c 'while :; do :; done' & done; wait; exit 0`}})
		waitState(t, c, 0, id, 60*time.Second, "done")
		u := waitUsage(t, c, id).Usage[0]
		cores := u.CPUSeconds / u.WallSeconds
		t.Logf("3 spinning processes under --cpus-per-rank 1: %.2f CPU s in %.2f s wall = %.2f cores", u.CPUSeconds, u.WallSeconds, cores)
		if cores > 1.2 || cores <= 0 {
			t.Errorf("%.2f cores, want at most 1.2 (the quota of one CPU)", cores)
		}
	})

	t.Run("bad input is refused", func(t *testing.T) {
		before, _ := c.Client(0).JobsWhere(context.Background(), api.JobsQuery{})
		for _, args := range [][]string{
			{"--mem", "0"}, {"--mem", "lots"}, {"--cpus-per-rank", "0"}, {"--mem", "1T"},
			{"--mem", "1G", "--mem-per-rank", "1G"},
		} {
			cmd := append(append([]string{"submit", "-n", "1", "--mpi", "none"}, args...), "--", "true")
			_, errOut, code := shoalCLI(t, c, 0, cmd...)
			if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("shoal %v: exit %d, stderr %q; want exit 2 and one line", cmd, code, errOut)
			}
			t.Logf("shoal %v: %s", args, strings.TrimSpace(errOut))
		}
		if _, errOut, _ := shoalCLI(t, c, 0, "submit", "-n", "1", "--mem", "1T", "--", "true"); !strings.Contains(errOut, "more than any node has") {
			t.Errorf("--mem 1T: %q, want the node's memory", errOut)
		}
		after, _ := c.Client(0).JobsWhere(context.Background(), api.JobsQuery{})
		if len(after) != len(before) {
			t.Errorf("bad input queued %d job(s)", len(after)-len(before))
		}
	})
}

func agentAnswers(c *testcluster.Cluster) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Client(0).Health(ctx)
	return err == nil
}

// TestUnconfinedAgent: an agent without cgroups (here turned off in its
// configuration) starts, says `confined: no` with the reason, refuses a
// job with a memory limit, and runs one without.
func TestUnconfinedAgent(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.NoCgroups = true })
	out, _, code := shoalCLI(t, c, 0, "nodes", "--json")
	var ns []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &ns) != nil || len(ns) != 1 || ns[0]["confined"] != false {
		t.Fatalf("shoal nodes --json: exit %d: %s; want confined false", code, out)
	}
	text, _, _ := shoalCLI(t, c, 0, "nodes")
	if !strings.Contains(text, "confined: no (cgroups turned off") {
		t.Errorf("shoal nodes does not say why the node is unconfined:\n%s", text)
	}
	_, errOut, code := shoalCLI(t, c, 0, "submit", "-n", "1", "--mem", "64M", "--", "true")
	if code != 2 || !strings.Contains(errOut, "runs jobs in cgroups") {
		t.Errorf("--mem on an unconfined cluster: exit %d, %q; want exit 2 and the reason", code, errOut)
	}
	if _, errOut, code := shoalCLI(t, c, 0, "run", "-n", "1", "--mpi", "none", "--", "true"); code != 0 {
		t.Errorf("a job without a memory limit: exit %d: %s", code, errOut)
	}
}

// TestMPIRanksAreConfined runs real MPICH and Open MPI jobs on two agents:
// every rank, and the daemon that started it (Hydra's proxy, Open MPI's
// orted or mpirun), is in the attempt's cgroup on its own node, and the
// cgroups are gone once the job is done.
func TestMPIRanksAreConfined(t *testing.T) {
	t.Parallel()
	needRootCgroups(t)
	c := jobCluster(t, 2, nil)
	probe := `echo "rank on $SHOAL_NODE|$(grep :memory: /proc/self/cgroup)|$(cat /proc/$PPID/comm)|$(grep :memory: /proc/$PPID/cgroup)"`
	for _, flavour := range []string{"mpich", "openmpi"} {
		t.Run(flavour, func(t *testing.T) {
			launcher := map[string]string{"mpich": "mpiexec.mpich", "openmpi": "mpirun.openmpi"}[flavour]
			if _, err := exec.LookPath(launcher); err != nil {
				t.Skipf("%s not installed (make deps installs it)", launcher)
			}
			out, errOut, code := shoalCLI(t, c, 0, "run", "-n", "4", "--ppn", "2", "--mpi", flavour, "--timeout", "2m",
				"--mem", "256M", "--", "/bin/sh", "-c", probe)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			ranks := 0
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Split(l, "|")
				if len(f) != 4 || !strings.HasPrefix(f[0], "rank on ") {
					continue
				}
				ranks++
				node := strings.TrimPrefix(f[0], "rank on ")
				own := "/shoal/" + node + "-"
				for what, cg := range map[string]string{"rank": f[1], "its parent " + f[2]: f[3]} {
					if !strings.Contains(cg, own) || !strings.Contains(cg, "/job-") {
						t.Errorf("%s on %s is in memory cgroup %q, not its attempt's under %s", what, node, cg, own)
					}
				}
				t.Logf("%s: rank in %s, parent %s", node, f[1], f[2])
			}
			if ranks != 4 {
				t.Fatalf("%d rank lines, want 4:\n%s\n%s", ranks, out, errOut)
			}
		})
	}
	// A rank past its memory limit on the node that does not head the
	// attempt: Hydra ends the job as soon as the rank dies, and the job
	// still fails with the OOM's reason, not Hydra's exit code.
	t.Run("mpich OOM on another node", func(t *testing.T) {
		if _, err := exec.LookPath("mpiexec.mpich"); err != nil {
			t.Skip("mpiexec.mpich not installed (make deps installs it)")
		}
		out, errOut, code := shoalCLI(t, c, 0, "run", "-n", "2", "--ppn", "1", "--mpi", "mpich", "--timeout", "2m",
			"--mem-per-rank", "64M", "--", "/bin/sh", "-c",
			`if [ "$PMI_RANK" = 1 ]; then echo "big rank on $SHOAL_NODE"; exec /usr/bin/python3 -c "b = b'x' * (300 << 20)"; else sleep 30; fi`)
		node := ""
		if _, after, ok := strings.Cut(out, "big rank on "); ok {
			node = strings.TrimSpace(strings.SplitN(after, "\n", 2)[0])
		}
		want := "out of memory on " + node + " (limit 64M, peak "
		if code == 0 || node == "" || !strings.Contains(errOut, want) {
			t.Fatalf("exit %d, want a failure with %q\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
		}
		t.Logf("rank 1 on %s; shoal run said:\n%s", node, errOut)
	})
	// Every attempt's cgroup is removed once its job is done.
	for i := range 2 {
		testcluster.WaitFor(t, 20*time.Second, "no attempt cgroup left on "+c.Name(i), func() bool {
			return len(c.Agent(i).AttemptCgroups()) == 0
		}, func() string { return fmt.Sprint(c.Agent(i).AttemptCgroups()) })
	}
}
