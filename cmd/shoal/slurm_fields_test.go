package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

func TestSlurmFormat(t *testing.T) {
	t.Parallel()
	known := func(l byte) bool { _, ok := squeueField(api.Job{}, l, time.Time{}); return ok }
	pieces, err := parseSlurmFormat("%.6i|%3t %j%%", known)
	if err != nil {
		t.Fatal(err)
	}
	task := 3
	j := api.Job{ID: 42, ArrayJobID: 40, ArrayTaskID: &task, State: "running", Name: "a-long-name"}
	got := render(pieces, func(l byte) string { v, _ := squeueField(j, l, time.Time{}); return v })
	if want := "  40_3|R   a-long-name%"; got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	for _, bad := range []string{"%.18", "%Y", "%"} {
		if _, err := parseSlurmFormat(bad, known); err == nil {
			t.Errorf("format %q accepted", bad)
		}
	}
}

func TestSlurmStates(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{"queued": "PENDING PD", "placing": "PENDING PD", "launching": "CONFIGURING CF",
		"running": "RUNNING R", "done": "COMPLETED CD", "killed": "CANCELLED CA", "failed": "FAILED F"} {
		long, short := slurmState(api.Job{State: state})
		if long+" "+short != want {
			t.Errorf("%s: %s %s, want %s", state, long, short, want)
		}
	}
	if long, _ := slurmState(api.Job{State: "failed", Reason: "exceeded its time limit of 1m0s"}); long != "TIMEOUT" {
		t.Errorf("a job failed by its time limit is %s, want TIMEOUT", long)
	}
	for d, want := range map[time.Duration]string{59 * time.Second: "0:59", 61 * time.Minute: "1:01:00", 49 * time.Hour: "2-01:00:00"} {
		if got := slurmDuration(d); got != want {
			t.Errorf("slurmDuration(%s) = %q, want %q", d, got, want)
		}
	}
	code := 137
	if got := slurmExitCode(&code); got != "0:9" {
		t.Errorf("exit 137 is %q in sacct, want 0:9 (killed by signal 9)", got)
	}
}

func TestSacctColumns(t *testing.T) {
	t.Parallel()
	cols, err := sacctColumns("jobid,State%20,exitcode")
	if err != nil || len(cols) != 3 || cols[1].name != "State" || cols[1].width != 20 {
		t.Fatalf("columns %+v, %v", cols, err)
	}
	if _, err := sacctColumns("JobID,Nope"); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("an unknown field: %v, want an error naming it", err)
	}
}

func TestSlurmArgs(t *testing.T) {
	t.Parallel()
	a, err := parseSlurmArgs("squeue", []string{"-ho", "%i", "--user=alice", "-u", "bob,carol", "12", "--", "-x"}, squeueOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !a.has("noheader") || a.last("format") != "%i" || strings.Join(a.list("user"), " ") != "alice bob carol" || strings.Join(a.operands, " ") != "12 -x" {
		t.Errorf("parsed %+v", a)
	}
	if _, err := parseSlurmArgs("squeue", []string{"--usr", "x"}, squeueOpts); err == nil || !strings.Contains(err.Error(), "did you mean --user") {
		t.Errorf("a near miss: %v, want a suggestion", err)
	}
}

// TestSbatchRewrite: sbatch's command line is read after the script's
// #SBATCH lines, so it wins, and sizes the job together with them.
func TestSbatchRewrite(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "job.sh", "#!/bin/sh\n#SBATCH -N 2 -t 10:00\n#SBATCH -J from-script\nhostname\n")
	out, err := sbatchSubmit([]string{"--ntasks-per-node=4", "-J", "from-cli", "job.sh", "arg"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(out, " ")
	for _, want := range []string{"submit --sbatch --slurm-script --np 8 --ppn 4", "--job-name from-script", "--job-name from-cli --batch -- job.sh arg"} {
		if !strings.Contains(got, want) {
			t.Errorf("sbatch rewrote to %q, lacking %q", got, want)
		}
	}
	if strings.Index(got, "from-script") > strings.Index(got, "from-cli") {
		t.Errorf("the command line's -J must come last, to win: %q", got)
	}
	if _, err := sbatchSubmit([]string{"--wrap", "hostname", "job.sh"}); err == nil {
		t.Error("--wrap with a script accepted")
	}
	if out, err := sbatchSubmit([]string{"--wrap=hostname"}); err != nil || !strings.HasSuffix(strings.Join(out, " "), "-- /bin/sh -c hostname") {
		t.Errorf("--wrap: %q, %v", out, err)
	}
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
