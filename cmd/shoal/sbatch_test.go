package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// #SBATCH lines become shoal job options with Slurm's meaning, ahead of
// the #SHOAL lines (which win), and every translated line is checked
// against the job options a script may set.
func TestParseSbatchDirectives(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		want         []string
		err          string
	}{
		{name: "a tutorial's header", script: "#!/bin/bash\n#SBATCH --job-name=cxx_mpi   # name\n#SBATCH --nodes=1\n#SBATCH --ntasks=4\n#SBATCH --cpus-per-task=1\n#SBATCH --mem-per-cpu=1G\n#SBATCH --time=00:01:00\n#SBATCH --mail-type=begin\n\nmodule purge\nsrun ./hello\n",
			want: []string{"--slurm-script", "--np", "4", "--ppn", "4", "--job-name", "cxx_mpi", "--cpus-per-rank", "1", "--mem-per-cpu", "1G", "--timeout", "1m0s", "--mail-type", "begin"}},
		{name: "short and glued forms, -o and -p as Slurm's", script: "#!/bin/sh\n#SBATCH -n8 -J hi -o out-%j.txt -p debug -A proj -t 1-02\n",
			want: []string{"--slurm-script", "--np", "8", "--job-name", "hi", "--output", "out-%j.txt", "--partition", "debug", "--account", "proj", "--timeout", "26h0m0s"}},
		{name: "#SHOAL wins: it comes after", script: "#!/bin/sh\n#SHOAL -n 2 -p 5\n#SBATCH -n 4 -a 1-3 -e e.txt\n",
			want: []string{"--slurm-script", "--np", "4", "--array", "1-3", "--error", "e.txt", "-n", "2", "-p", "5"}},
		{name: "nodes times tasks per node", script: "#!/bin/sh\n#SBATCH -N 2\n#SBATCH --ntasks-per-node 3\n", want: []string{"--slurm-script", "--np", "6", "--ppn", "3"}},
		{name: "nodes alone: one task each", script: "#!/bin/sh\n#SBATCH -N 3 --exclusive -w n[1-3] -x n4 -C avx2 -s\n",
			want: []string{"--slurm-script", "--np", "3", "--ppn", "1", "--exclusive", "--nodelist", "n[1-3]", "--exclude", "n4", "--constraint", "avx2", "--oversubscribe"}},
		{name: "no size: Slurm's default, later", script: "#!/bin/sh\n#SBATCH -d afterok:3 --begin=now+1h --parsable -D /tmp --export=NONE\n",
			want: []string{"--slurm-script", "--dependency", "afterok:3", "--begin", "now+1h", "--parsable", "--workdir", "/tmp", "--export", "NONE"}},
		{name: "stops at the first command", script: "#!/bin/sh\n#SBATCH -n 2\nhostname\n#SBATCH --bogus\n", want: []string{"--slurm-script", "--np", "2"}},
		{name: "unknown option, suggested", script: "#!/bin/sh\n#SBATCH -n 2\n#SBATCH --ntask-per-node=2\n", err: "job.sh:3: unknown #SBATCH option --ntask-per-node; did you mean --ntasks-per-node?"},
		{name: "unknown short option", script: "#!/bin/sh\n#SBATCH -Z 2\n", err: "job.sh:2: unknown #SBATCH option -Z"},
		{name: "bad time", script: "#!/bin/sh\n#SBATCH -t 1:2:3:4\n", err: "job.sh:2: time limit \"1:2:3:4\""},
		{name: "bad value checked as shoal's", script: "#!/bin/sh\n#SBATCH -c four\n", err: "job.sh:2: invalid value \"four\""},
		{name: "uneven tasks", script: "#!/bin/sh\n#SBATCH -N 2\n#SBATCH -n 3\n", err: "job.sh:3: -n 3 over -N 2"},
		{name: "node range", script: "#!/bin/sh\n#SBATCH -N 2-4\n", err: "job.sh:2: -N/--nodes \"2-4\": shoal places a fixed number of nodes"},
		{name: "missing value", script: "#!/bin/sh\n#SBATCH --time\n", err: "job.sh:2: -t/--time needs a value"},
		{name: "#SHOAL typo, suggested", script: "#!/bin/sh\n#SHOAL --job-nam x\n", err: "job.sh:2: unknown flag --job-nam; did you mean --job-name?"},
	} {
		got, found, err := parseDirectives("job.sh", strings.NewReader(tc.script))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: err = %v, want one line with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !found || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q found %v err %v; want %q", tc.name, got, found, err, tc.want)
		}
	}
}

func TestParseTimeLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"30": 30 * time.Minute, "5:30": 5*time.Minute + 30*time.Second, "01:02:03": time.Hour + 2*time.Minute + 3*time.Second,
		"2-12": 60 * time.Hour, "1-00:30": 24*time.Hour + 30*time.Minute, "1-01:02:03": 25*time.Hour + 2*time.Minute + 3*time.Second,
		"90m": 90 * time.Minute, "1h30m": 90 * time.Minute, "UNLIMITED": 0, "INFINITE": 0, "0": 0,
	} {
		if got, err := parseTimeLimit(in); err != nil || got != want {
			t.Errorf("parseTimeLimit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1:2:3:4", "-5", "1-", "a", "1-2:3:4:5", "5:-1", "400-00", "-1h", "+5"} {
		if got, err := parseTimeLimit(bad); err == nil {
			t.Errorf("parseTimeLimit(%q) = %v, want an error", bad, got)
		}
	}
}

// A Slurm script submitted as a user would: Slurm's defaults (one task,
// output to slurm-%j.out) and the options shoal does not honour named in
// one line; glued short flags on the command line too. Nothing reaches an
// agent: the spec is built and checked by buildSubmit.
func TestSbatchScriptSpec(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "hello.slurm")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH -J hello -p batch --mail-type=END -A lab\n#SBATCH --mem-per-cpu=100M -c 2 -t 2-00:00:00 -w n[1-2]\necho hi\n"), 0o644)
	arr := filepath.Join(dir, "arr.slurm")
	os.WriteFile(arr, []byte("#!/bin/bash\n#SBATCH --array=1-3\n#SBATCH --exclusive\necho $SLURM_ARRAY_TASK_ID\n"), 0o644)
	build := func(args ...string) (spec string, stderr string, code int) {
		t.Helper()
		var o, e bytes.Buffer
		app := newApp(&o, &e)
		app.Command("submit").Action = func(c *cli.Context) error {
			req, err := buildSubmit(c)
			if err != nil {
				return err
			}
			if note := slurmNotes(c); note != "" {
				fmt.Fprintln(c.App.ErrWriter, note)
			}
			sp := req.Spec
			var hosts, slurmEnv []string
			for _, h := range sp.Hostfile {
				hosts = append(hosts, h.Host)
			}
			for _, kv := range sp.Env {
				if strings.HasPrefix(kv, "SLURM_") {
					slurmEnv = append(slurmEnv, kv)
				}
			}
			fmt.Fprintf(c.App.Writer, "%d|%d|%s|%s|%v|%d|%d|%s|%v|%s|%s", sp.NP, sp.PPN, sp.Name, sp.Output, sp.Timeout,
				sp.MemPerRank>>20, sp.CPUsPerRank, strings.Join(hosts, ","), sp.Oversubscribe, strings.Join(slurmEnv, ","), sp.Partition)
			return nil
		}
		args = splitGlued(app, append([]string{"shoal", "submit"}, args...))
		args, err := expandScript(app, reorderArgs(app, args))
		if err == nil {
			err = app.Run(args)
		}
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			fmt.Fprintln(&e, err)
			return o.String(), e.String(), ec.ExitCode()
		}
		return o.String(), e.String(), 0
	}
	t.Chdir(dir)
	got, errOut, code := build("--mpi", "none", script)
	want := "1|0|hello|slurm-%j.out|48h0m0s|200|2|n1,n2|true|SLURM_JOB_ACCOUNT=lab|batch"
	if code != 0 || got != want {
		t.Errorf("hello.slurm: exit %d, spec %q, stderr %q; want %q", code, got, errOut, want)
	}
	if strings.Contains(errOut, "--partition") || !strings.Contains(errOut, "--mail-type=END (no mail") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("hello.slurm: stderr %q; want one line naming --mail-type as not honoured, and not the partition (honoured)", errOut)
	}
	got, errOut, code = build("--mpi", "none", "-n3", "-Jnamed", "--output", "mine.txt", arr)
	if want := "3|0|named|mine.txt|0s|0|0||false||"; code != 0 || got != want {
		t.Errorf("arr.slurm with -n3 -Jnamed --output: exit %d, spec %q, stderr %q; want %q", code, got, errOut, want)
	}
	if !strings.Contains(errOut, "--exclusive (nodes are not reserved whole") {
		t.Errorf("arr.slurm: stderr %q does not name --exclusive", errOut)
	}
	if got, _, _ = build("--mpi", "none", arr); !strings.Contains(got, "|slurm-%A_%a.out|") {
		t.Errorf("an array's default output: %q, want slurm-%%A_%%a.out", got)
	}
	// A #SHOAL-only script keeps shoal's rules: no default size or output.
	own := filepath.Join(dir, "own.sh")
	os.WriteFile(own, []byte("#!/bin/sh\n#SHOAL -J own\necho hi\n"), 0o644)
	if _, errOut, code := build("--mpi", "none", own); code != exitUsage || !strings.Contains(errOut, "-n/--np must be at least 1") {
		t.Errorf("#SHOAL script without -n: exit %d, %q", code, errOut)
	}
}

func TestSplitGlued(t *testing.T) {
	t.Parallel()
	app := newApp(io.Discard, io.Discard)
	for _, tc := range []struct{ in, want []string }{
		{[]string{"shoal", "submit", "-n8", "-Jx", "-np", "4", "-o", "./a", "-n9"}, []string{"shoal", "submit", "-n", "8", "-J", "x", "-np", "4", "-o", "./a", "-n9"}},
		{[]string{"shoal", "run", "-c2", "--", "-n8"}, []string{"shoal", "run", "-c", "2", "--", "-n8"}},
		{[]string{"shoal", "jobs", "-n8"}, []string{"shoal", "jobs", "-n8"}},
	} {
		if got := splitGlued(app, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitGlued(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSrunCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		n    string
		prog []string
	}{
		{[]string{"./hello"}, "", []string{"./hello"}},
		{[]string{"-n", "4", "--mpi=pmi2", "-l", "./hello", "-n", "9"}, "4", []string{"./hello", "-n", "9"}},
		{[]string{"-n8", "-N", "2", "--ntasks-per-node=4", "hostname"}, "8", []string{"hostname"}},
		{[]string{"--ntasks=3", "--", "-weird"}, "3", []string{"-weird"}},
	} {
		n, prog, err := srunCommand(tc.args)
		if err != nil || n != tc.n || !slices.Equal(prog, tc.prog) {
			t.Errorf("srunCommand(%q) = %q, %q, %v; want %q, %q", tc.args, n, prog, err, tc.n, tc.prog)
		}
	}
	for _, bad := range [][]string{{"-n", "4"}, {"-n"}} {
		if _, _, err := srunCommand(bad); err == nil {
			t.Errorf("srunCommand(%q) took it", bad)
		}
	}
}

// TestEnvKeepsCommas: --env K=V takes V whole, commas included (Open MPI's
// OMPI_MCA_btl=self,tcp), on the command line and in a directive, and two
// uses are two entries.
func TestEnvKeepsCommas(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n#SHOAL --env PRTE_MCA_x=a,b\necho hi\n"), 0o644)
	var o, e bytes.Buffer
	app := newApp(&o, &e)
	var env []string
	app.Command("submit").Action = func(c *cli.Context) error {
		req, err := buildSubmit(c)
		env = req.Spec.Env
		return err
	}
	args, err := expandScript(app, reorderArgs(app, []string{"shoal", "submit", "--mpi", "none", "-n", "1",
		"--env", "OMPI_MCA_btl=self,tcp", "--env", "X=1", script}))
	if err == nil {
		err = app.Run(args)
	}
	if err != nil {
		t.Fatalf("submit: %v (%s)", err, e.String())
	}
	for _, want := range []string{"OMPI_MCA_btl=self,tcp", "X=1", "PRTE_MCA_x=a,b"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %q lacks %q", env, want)
		}
	}
	for _, kv := range env {
		if kv == "tcp" || kv == "b" {
			t.Errorf("environment %q holds %q: a value was split at its comma", env, kv)
		}
	}
}
