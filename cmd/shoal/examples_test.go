package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestExampleScriptsRun submits every batch script of examples/batch, as
// its header says to, to a live two-node cluster and reads what each
// wrote: the MPI ring, the array's tasks, the dependency chain, the
// elastic solver to its last iteration, and the GPU job, which a cluster
// without a GPU keeps queued with the reason.
func TestExampleScriptsRun(t *testing.T) {
	if _, err := exec.LookPath("mpicc.mpich"); err != nil {
		t.Skip("mpicc.mpich not installed (make deps installs it)")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scripts, err := filepath.Glob(filepath.Join(src, "batch", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no example scripts in %s (%v)", src, err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The build lines the scripts' headers give.
	for _, build := range [][]string{
		{"mpicc.mpich", "-O2", "-o", filepath.Join(dir, "ring"), filepath.Join(src, "mpi", "ring.c")},
		{"mpicc.mpich", "-O2", "-I" + filepath.Join(src, "mpi"), "-o", filepath.Join(dir, "jacobi"), filepath.Join(src, "mpi", "jacobi.c")},
	} {
		if b, err := exec.Command(build[0], build[1:]...).CombinedOutput(); err != nil {
			t.Skipf("%s cannot build the examples (%v): %s", build[0], err, b)
		}
	}
	c := testcluster.New(t, 2, testcluster.Options{
		Bin:     testcluster.BuildShoal(t),
		Sampler: func(int) probe.Sampler { return idleSampler{} },
		Configure: func(_ int, cfg *agent.Config) {
			cfg.CoallocTimeout = testcluster.Stretch(6 * time.Second) // a loaded 2-core machine reserves slowly
			cfg.Probes.InProcess = true
		},
	})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	t.Chdir(dir)
	submit := func(args ...string) uint64 {
		t.Helper()
		out, errOut, code := shoal(t, env, append([]string{"submit"}, args...)...)
		if code != 0 {
			t.Fatalf("shoal submit %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
		if err != nil {
			t.Fatalf("shoal submit %s printed %q, want the job ID", strings.Join(args, " "), out)
		}
		return id
	}
	job := func(id uint64) api.Job {
		j, _ := c.Client(0).Job(context.Background(), id)
		return j
	}
	done := func(id uint64) {
		t.Helper()
		var j api.Job
		testcluster.WaitFor(t, 4*time.Minute, "job "+strconv.FormatUint(id, 10)+" to end", func() bool {
			j = job(id)
			return terminal(j.State)
		}, func() string { return j.State + " / " + j.WaitReason + " / " + j.Reason })
		if j.State != "done" {
			t.Errorf("job %d (%s) %s: %s", id, j.Name, j.State, j.Reason)
		}
	}
	output := func(name string, want ...string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no output file %s: %v", name, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q:\n%s", name, w, b)
			}
		}
	}
	idStr := func(id uint64) string { return strconv.FormatUint(id, 10) }

	ring := submit("mpi.sh")
	sweep := submit("array.sh")
	prepare := submit("prepare.sh")
	analyse := submit("-d", "afterok:"+idStr(prepare), "analyse.sh")
	jacobi := submit("elastic.sh")
	gpu := submit("gpu.sh")

	done(ring)
	output("ring-"+idStr(ring)+".out", "job "+idStr(ring)+" (ring) on ", "4 ranks on 2 nodes", "rank 0 of 4", "rank 3 of 4")
	for task := 0; task < 4; task++ {
		done(sweep + uint64(task))
		output("sweep-"+idStr(sweep)+"_"+strconv.Itoa(task)+".out",
			"task "+strconv.Itoa(task)+" of array "+idStr(sweep)+": size "+strconv.Itoa((task+1)*100))
	}
	done(prepare)
	done(analyse)
	output("prepare-"+idStr(prepare)+".out", "prepared 100 values in "+dir)
	output("analyse-"+idStr(analyse)+".out", "sum of 100 values: 5050")
	done(jacobi)
	output("jacobi-"+idStr(jacobi)+".out", "jacobi n=256 iters=400 ")

	// Without a GPU anywhere the job waits, saying for what; with one it runs.
	switch j := job(gpu); {
	case j.State == "done":
	case terminal(j.State):
		t.Errorf("gpu.sh %s: %s", j.State, j.Reason)
	case !strings.Contains(strings.ToLower(j.WaitReason), "gpu"):
		t.Errorf("gpu.sh is %s with reason %q, want a wait naming the GPU", j.State, j.WaitReason)
	default:
		if _, errOut, code := shoal(t, env, "kill", idStr(gpu)); code != 0 {
			t.Errorf("kill %d: exit %d: %s", gpu, code, errOut)
		}
	}
}
