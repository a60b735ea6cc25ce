package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// slurmAs runs the Slurm command name as a link to shoal would: argv[0]
// is its own name, in a directory of its own.
func slurmAs(t *testing.T, env map[string]string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	t.Setenv("SHOAL_AGENTS_CACHE", filepath.Join(t.TempDir(), "agents.json"))
	var o, e bytes.Buffer
	code = run(append([]string{"/usr/lib/shoal/slurm/bin/" + name}, args...), &o, &e)
	return o.String(), e.String(), code
}

// TestSlurmCommandsAsScriptsUseThem drives a live two-node cluster with
// Slurm's commands the way a user's shell script does — an sbatch
// --parsable chain, squeue -h -o, scontrol show/hold/release, scancel,
// sacct --parsable2, sinfo -h -o, srun — and parses their output as that
// script would.
func TestSlurmCommandsAsScriptsUseThem(t *testing.T) {
	c := testcluster.New(t, 2, testcluster.Options{
		Bin:     testcluster.BuildShoal(t),
		Sampler: func(int) probe.Sampler { return idleSampler{} },
		Configure: func(i int, cfg *agent.Config) {
			cfg.CoallocTimeout = testcluster.Stretch(6 * time.Second)
			cfg.Probes.InProcess = true
			if i == 0 {
				cfg.Features = []string{"bigmem", "ib"}
			}
		},
	})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("first.sh", "#!/bin/sh\n#SBATCH -J first\necho made > made.txt\n")
	write("second.sh", "#!/bin/sh\n#SBATCH -J second\ncat made.txt\n")
	write("later.sh", "#!/bin/sh\n#SBATCH -J later\ntrue\n")

	out, errOut, code := slurmAs(t, env, "sbatch", "first.sh")
	if code != 0 || !strings.HasPrefix(out, "Submitted batch job ") {
		t.Fatalf("sbatch first.sh: exit %d, %q %q; want \"Submitted batch job ID\"", code, out, errOut)
	}
	first := strings.TrimSpace(strings.TrimPrefix(out, "Submitted batch job "))
	out, errOut, code = slurmAs(t, env, "sbatch", "--parsable", "-d", "afterok:"+first, "second.sh")
	if code != 0 {
		t.Fatalf("sbatch --parsable -d afterok:%s second.sh: exit %d: %s", first, code, errOut)
	}
	second := strings.TrimSpace(out)
	if _, err := strconv.ParseUint(second, 10, 64); err != nil {
		t.Fatalf("sbatch --parsable printed %q, want the ID alone", out)
	}
	// A job that waits: its state and limit through squeue, changed
	// through scontrol, ended through scancel.
	out, errOut, code = slurmAs(t, env, "sbatch", "--parsable", "--begin=now+1h", "-t", "1:00:00", "later.sh")
	if code != 0 {
		t.Fatalf("sbatch later.sh: exit %d: %s", code, errOut)
	}
	later := strings.TrimSpace(out)
	squeueState := func(id string) (state, limit string) {
		t.Helper()
		out, errOut, code := slurmAs(t, env, "squeue", "-h", "-j", id, "-o", "%i %T %l")
		f := strings.Fields(out)
		if code != 0 || len(f) != 3 || f[0] != id {
			t.Fatalf("squeue -h -j %s -o '%%i %%T %%l': exit %d, %q %q", id, code, out, errOut)
		}
		return f[1], f[2]
	}
	if st, limit := squeueState(later); st != "PENDING" || limit != "1:00:00" {
		t.Errorf("waiting job: squeue says %s %s, want PENDING 1:00:00", st, limit)
	}
	if out, _, _ := slurmAs(t, env, "squeue", "-h", "-o", "%i %r", "-t", "PD"); !strings.Contains(out, later+" BeginTime") {
		t.Errorf("squeue -t PD -o '%%i %%r' = %q, want %s BeginTime", out, later)
	}
	if _, errOut, code := slurmAs(t, env, "scontrol", "update", "JobId="+later, "TimeLimit=30:00"); code != 0 {
		t.Fatalf("scontrol update JobId=%s TimeLimit=30:00: exit %d: %s", later, code, errOut)
	}
	if _, limit := squeueState(later); limit != "30:00" {
		t.Errorf("after scontrol update TimeLimit=30:00, squeue says the limit is %s", limit)
	}
	if _, errOut, code := slurmAs(t, env, "scontrol", "hold", later); code != 0 {
		t.Fatalf("scontrol hold: exit %d: %s", code, errOut)
	}
	out, _, _ = slurmAs(t, env, "scontrol", "show", "job", later)
	if !strings.Contains(out, "JobState=PENDING Reason=JobHeldUser") || !strings.Contains(out, "JobName=later") {
		t.Errorf("scontrol show job of a held job:\n%s", out)
	}
	if _, errOut, code := slurmAs(t, env, "scontrol", "release", later); code != 0 {
		t.Fatalf("scontrol release: exit %d: %s", code, errOut)
	}
	if _, errOut, code := slurmAs(t, env, "scancel", later); code != 0 {
		t.Fatalf("scancel %s: exit %d: %s", later, code, errOut)
	}
	if st, _ := squeueState(later); st != "CANCELLED" {
		t.Errorf("after scancel, squeue -j says %s, want CANCELLED", st)
	}
	if _, errOut, code := slurmAs(t, env, "scancel", "999999"); code == 0 || !strings.Contains(errOut, "Invalid job id") {
		t.Errorf("scancel of no job: exit %d, %q; want a failure naming the invalid ID", code, errOut)
	}

	// The chain ends; sacct reports it as a script parsing --parsable2 reads it.
	for _, id := range []string{first, second} {
		testcluster.WaitFor(t, 3*time.Minute, "job "+id+" to end", func() bool {
			out, _, _ := slurmAs(t, env, "squeue", "-h", "-j", id, "-o", "%T")
			s := strings.TrimSpace(out)
			return s == "COMPLETED" || s == "FAILED" || s == "CANCELLED"
		}, func() string { out, _, _ := slurmAs(t, env, "scontrol", "show", "job", id); return out })
	}
	out, errOut, code = slurmAs(t, env, "sacct", "--parsable2", "-n", "-j", first+","+second, "--format=JobID,JobName,State,ExitCode")
	if code != 0 {
		t.Fatalf("sacct: exit %d: %s", code, errOut)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "|")
		if len(f) != 4 {
			t.Fatalf("sacct --parsable2 line %q: want 4 |-separated fields", l)
		}
		rows[f[0]] = f[1:]
	}
	for id, want := range map[string][]string{first: {"first", "COMPLETED", "0:0"}, first + ".batch": {"batch", "COMPLETED", "0:0"}, second: {"second", "COMPLETED", "0:0"}} {
		if got := rows[id]; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("sacct row %s = %v, want %v (all: %q)", id, got, want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "slurm-"+second+".out")); err != nil || strings.TrimSpace(string(b)) != "made" {
		t.Errorf("the second job's slurm-%s.out: %q, %v; want what the first made", second, b, err)
	}

	// A finished job requeued held waits, and runs again once released.
	if _, errOut, code := slurmAs(t, env, "scontrol", "requeuehold", first); code != 0 {
		t.Fatalf("scontrol requeuehold %s: exit %d: %s", first, code, errOut)
	}
	if out, _, _ := slurmAs(t, env, "squeue", "-h", "-j", first, "-o", "%T %r"); strings.TrimSpace(out) != "PENDING JobHeldUser" {
		t.Errorf("a finished job requeued held: squeue says %q, want PENDING JobHeldUser", out)
	}
	if _, errOut, code := slurmAs(t, env, "scontrol", "release", first); code != 0 {
		t.Fatalf("scontrol release: exit %d: %s", code, errOut)
	}
	testcluster.WaitFor(t, 3*time.Minute, "the requeued job "+first+" to run again", func() bool {
		out, _, _ := slurmAs(t, env, "sacct", "-X", "-n", "-P", "-j", first, "--format=State")
		return strings.TrimSpace(out) == "COMPLETED"
	})

	// Every node idle once the jobs are done, in one sinfo line.
	out, errOut, code = slurmAs(t, env, "sinfo", "-h", "-o", "%D %t %P")
	if code != 0 || strings.TrimSpace(out) != "2 idle all*" {
		t.Errorf("sinfo -h -o '%%D %%t %%P': exit %d, %q %q; want \"2 idle all*\"", code, out, errOut)
	}
	out, _, code = slurmAs(t, env, "sinfo", "-N", "-h", "-o", "%N %f")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 || lines[0] != "n0 bigmem,ib" || lines[1] != "n1 (null)" {
		t.Errorf("sinfo -N -h -o '%%N %%f' = %q, want a line per node with its features", out)
	}

	// completedOutput submits script with sbatch, waits for it to complete
	// and is what it wrote to slurm-ID.out.
	completedOutput := func(script string) string {
		t.Helper()
		out, errOut, code := slurmAs(t, env, "sbatch", "--parsable", script)
		if code != 0 {
			t.Fatalf("sbatch %s: exit %d: %s", script, code, errOut)
		}
		id := strings.TrimSpace(out)
		testcluster.WaitFor(t, 3*time.Minute, "job "+id+" to end", func() bool {
			out, _, _ := slurmAs(t, env, "squeue", "-h", "-j", id, "-o", "%T")
			return strings.TrimSpace(out) == "COMPLETED"
		})
		b, _ := os.ReadFile(filepath.Join(dir, "slurm-"+id+".out"))
		return strings.TrimSpace(string(b))
	}

	// A partition of one node: jobs that name it run there, within its limits.
	if _, errOut, code := shoal(t, env, "partition", "create", "debug", "--nodes", "n1", "--max-time", "10:00"); code != 0 {
		t.Fatalf("partition create: exit %d: %s", code, errOut)
	}
	write("part.sh", "#!/bin/sh\n#SBATCH -p debug\necho \"$SLURM_JOB_PARTITION on $SHOAL_NODE\"\n")
	if _, errOut, code := slurmAs(t, env, "sbatch", "-t", "20:00", "part.sh"); code == 0 || !strings.Contains(errOut, "maximum") {
		t.Errorf("sbatch -t 20:00 into a partition of 10 minutes: exit %d, %q; want refused naming the maximum", code, errOut)
	}
	if got := completedOutput("part.sh"); got != "debug on n1" {
		t.Errorf("a job of partition debug (node n1) wrote %q, want \"debug on n1\"", got)
	}
	if out, _, _ := slurmAs(t, env, "sinfo", "-h", "-o", "%P %D %N %l"); strings.TrimSpace(out) != "debug 1 n1 10:00" {
		t.Errorf("sinfo with partition debug: %q, want \"debug 1 n1 10:00\"", out)
	}

	// A constraint picks the node with the features, whichever is free.
	write("feat.sh", "#!/bin/sh\n#SBATCH -C ib&bigmem\necho \"on $SHOAL_NODE\"\n")
	if got := completedOutput("feat.sh"); got != "on n0" {
		t.Errorf("a job of -C ib&bigmem (only n0 has both) wrote %q, want \"on n0\"", got)
	}
	if _, errOut, code := slurmAs(t, env, "sbatch", "-C", "[ib|gpu]", "feat.sh"); code == 0 || !strings.Contains(errOut, "not supported") {
		t.Errorf("sbatch -C '[ib|gpu]': exit %d, %q; want refused naming what is not supported", code, errOut)
	}

	// srun outside a job runs one and waits, as shoal run does.
	out, errOut, code = slurmAs(t, env, "srun", "-n", "2", "-N", "2", "echo", "hi")
	if code != 0 || strings.Count(out, "hi") != 2 {
		t.Errorf("srun -n 2 -N 2 echo hi: exit %d, %q %q; want hi twice", code, out, errOut)
	}
}
