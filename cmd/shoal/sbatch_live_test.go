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

// idleSampler reports an idle node whatever the machine running the test
// is doing, so that placement never waits for load to fall.
type idleSampler struct{}

func (idleSampler) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), MemAvail: 8 << 30}, nil
}

// TestSlurmScriptsRunUnchanged submits Slurm users' scripts of the three
// kinds tutorials teach — an MPI hello launched with srun, an array
// indexing $SLURM_ARRAY_TASK_ID, a chain of two jobs through
// --dependency=afterok with --parsable — unchanged to a live two-node
// cluster, and reads their output where sbatch would write it.
func TestSlurmScriptsRunUnchanged(t *testing.T) {
	if _, err := exec.LookPath("mpicxx.mpich"); err != nil {
		t.Skip("mpicxx.mpich not installed (make deps installs it)")
	}
	dir := t.TempDir()
	for _, f := range []string{"hello_mpi.cpp", "hello_mpi.slurm", "hello_array.slurm", "first.slurm", "second.slurm"} {
		b, err := os.ReadFile(filepath.Join("testdata", "slurm", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644) // not executable: run through the #! line, as sbatch does
	}
	if b, err := exec.Command("mpicxx.mpich", "-O1", "-o", filepath.Join(dir, "hello_mpi"), filepath.Join(dir, "hello_mpi.cpp")).CombinedOutput(); err != nil {
		t.Skipf("mpicxx.mpich cannot build the hello (%v): %s", err, b)
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
	t.Chdir(dir) // the submit directory, where sbatch writes slurm-%j.out
	submit := func(args ...string) uint64 {
		t.Helper()
		out, errOut, code := shoal(t, env, append([]string{"submit"}, args...)...)
		if code != 0 {
			t.Fatalf("submit %q: exit %d: %s", args, code, errOut)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
		if err != nil {
			t.Fatalf("submit %q printed %q, want the job ID alone", args, out)
		}
		return id
	}
	done := func(id uint64) api.Job {
		t.Helper()
		var j api.Job
		testcluster.WaitFor(t, 3*time.Minute, "job "+strconv.FormatUint(id, 10)+" to end", func() bool {
			var err error
			j, err = c.Client(0).Job(context.Background(), id)
			return err == nil && terminal(j.State)
		}, func() string { return j.State + " / " + j.WaitReason + " / " + j.Reason })
		if j.State != "done" {
			t.Errorf("job %d (%s) %s: %s", id, j.Name, j.State, j.Reason)
		}
		return j
	}
	file := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no output file %s: %v", name, err)
		}
		return string(b)
	}

	// The MPI hello: -N 2 -n 4 is two ranks on each node, started by srun.
	mpi := submit("hello_mpi.slurm")
	arr := submit("hello_array.slurm")
	// The chain: the second waits for the first to succeed.
	first := submit("--parsable", "first.slurm")
	second := submit("--parsable", "--dependency=afterok:"+strconv.FormatUint(first, 10), "second.slurm")

	j := done(mpi)
	out := file("slurm-" + strconv.FormatUint(mpi, 10) + ".out")
	want := "job " + strconv.FormatUint(mpi, 10) + " on n[0-1]: 4 tasks on 2 nodes, 1 cpu each"
	if !strings.Contains(out, want) {
		t.Errorf("hello_mpi.slurm's output lacks %q:\n%s", want, out)
	}
	for _, w := range []string{"Hello from rank 0 of 4 on n0", "Hello from rank 1 of 4 on n0", "Hello from rank 2 of 4 on n1", "Hello from rank 3 of 4 on n1"} {
		if !strings.Contains(out, w) {
			t.Errorf("hello_mpi.slurm's output lacks %q:\n%s", w, out)
		}
	}
	if st := j.Attempts[len(j.Attempts)-1].Steps; len(st) != 1 || st[0].Cmd[0] != "srun" || st[0].ExitCode == nil || *st[0].ExitCode != 0 {
		t.Errorf("hello_mpi.slurm's steps %+v, want one srun step exiting 0", st)
	}
	if j.Name != "cxx_mpi" {
		t.Errorf("hello_mpi.slurm's job name %q, want cxx_mpi", j.Name)
	}

	for task := 1; task <= 3; task++ {
		id := arr + uint64(task-1)
		done(id)
		out := file("slurm-" + strconv.FormatUint(arr, 10) + "_" + strconv.Itoa(task) + ".out")
		want := "Hello world from task " + strconv.Itoa(task) + " of array " + strconv.FormatUint(arr, 10) +
			" (job " + strconv.FormatUint(id, 10) + ", account lab-2024-01)"
		if strings.TrimSpace(out) != want {
			t.Errorf("array task %d wrote %q, want %q", task, out, want)
		}
	}

	done(first)
	done(second)
	if out := file("first.out"); strings.TrimSpace(out) != "first ran in "+dir {
		t.Errorf("first.slurm wrote %q", out)
	}
	if out := file("slurm-" + strconv.FormatUint(second, 10) + ".out"); strings.TrimSpace(out) != "second read: made-by-first" {
		t.Errorf("second.slurm wrote %q, want what the first left", out)
	}
}
