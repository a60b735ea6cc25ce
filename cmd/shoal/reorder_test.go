package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// Flags after positional arguments (`shoal job 5 --json`). Every command of the
// app has a row, so a new command must say how its arguments are read.
func TestReorderArgsEveryCommand(t *testing.T) {
	t.Parallel()
	cases := map[string][][2]string{
		"agent": {{"agent --data-dir d", "agent --data-dir d"}},
		"nodes": {{"nodes --json", "nodes --json"}},
		"node": {
			{"node drain n3 --deadline 30m", "node drain --deadline 30m n3"},
			{"node undrain n3 --json", "node undrain --json n3"},
		},
		"operator": {
			{"operator snapshot save f.snap --addr http://h:1", "operator snapshot save --addr http://h:1 f.snap"},
			{"operator raft remove-peer n7", "operator raft remove-peer n7"},
		},
		"members": {{"members --json", "members --json"}},
		"leader":  {{"leader --json", "leader --json"}},
		"keygen":  {{"keygen", "keygen"}},
		"tls": { // subcommands read their own flags, in any order
			{"tls cert create --node n1", "tls cert create --node n1"},
			{"tls cert create --node n1 --ip 10.0.0.1 out", "tls cert create --node n1 --ip 10.0.0.1 out"},
			{"tls ca create", "tls ca create"},
		},
		"net":     {{"net --metric lat --json", "net --metric lat --json"}},
		"probes":  {{"probes --json", "probes --json"}},
		"rtt":     {{"rtt n2 n3 --addr http://h:1", "rtt --addr http://h:1 n2 n3"}},
		"probe":   {{"probe latency --help", "probe --help latency"}},
		"jobs":    {{"jobs --json", "jobs --json"}},
		"history": {{"history --user alice --json", "history --user alice --json"}},
		// Slurm's commands read Slurm's options themselves: nothing moves.
		"slurm": {{"slurm squeue -h -o %i --me", "slurm squeue -h -o %i --me"}, {"slurm sbatch --parsable job.sh", "slurm sbatch --parsable job.sh"}},
		"partition": {
			{"partition create debug --nodes n[1-2] --default", "partition create --nodes n[1-2] --default debug"},
			{"partition delete debug --addr http://h:1", "partition delete --addr http://h:1 debug"},
		},
		"partitions": {{"partitions --json", "partitions --json"}},
		"events":     {{"events --topic job --json", "events --topic job --json"}},
		"job": {
			{"job 5 --json", "job --json 5"},
			{"job 5 --addr http://h:1 --json", "job --addr http://h:1 --json 5"},
			{"job --json 5", "job --json 5"},
			{"job 5 --addr=http://h:1", "job --addr=http://h:1 5"},
			{"job 5 -- --json", "job 5 -- --json"}, // after --, an argument
		},
		"logs":    {{"logs 5 -f", "logs -f 5"}, {"logs 5 --attempt 2 -f", "logs --attempt 2 -f 5"}},
		"kill":    {{"kill 5 --addr http://h:1", "kill --addr http://h:1 5"}},
		"hold":    {{"hold 12_3 --addr http://h:1", "hold --addr http://h:1 12_3"}},
		"release": {{"release 12 --addr http://h:1", "release --addr http://h:1 12"}},
		// The program's flags are the program's: nothing after the command line's start moves.
		"run": {
			{"run -n 4 -- ./prog --flag -n 9", "run -n 4 -- ./prog --flag -n 9"},
			{"run -n 4 ./prog --flag", "run -n 4 ./prog --flag"},
		},
		"submit": {{"submit -n 4 -- ./prog -x", "submit -n 4 -- ./prog -x"}},
		"rsh":    {{"rsh -x HOST cmd -x --json", "rsh -x HOST cmd -x --json"}},
		"step":   {{"step --skip /d -- mpiexec -n 2 --json ./a.out", "step --skip /d -- mpiexec -n 2 --json ./a.out"}},
		"alloc":  {{"alloc -n 4 --format openmpi", "alloc -n 4 --format openmpi"}},
		"gen":    {{"gen man out", "gen man out"}, {"gen completion bash", "gen completion bash"}},
		"export": {{"export slurm-topology --plugin block --weights", "export slurm-topology --plugin block --weights"}, {"export k8s-labels --json", "export k8s-labels --json"}},
		"progress": {
			{"progress --iter 5", "progress --iter 5"},
			{"progress --iter -1", "progress --iter -1"},
		},
	}
	app := newApp(io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		if _, ok := cases[cmd.Name]; !ok {
			t.Errorf("command %q has no row: add how its arguments are read", cmd.Name)
		}
	}
	for name, rows := range cases {
		if app.Command(name) == nil {
			t.Errorf("row for %q, which is not a command", name)
		}
		for _, r := range rows {
			got := strings.Join(reorderArgs(app, append([]string{"shoal"}, strings.Fields(r[0])...))[1:], " ")
			if got != r[1] {
				t.Errorf("%q reordered to %q, want %q", r[0], got, r[1])
			}
		}
	}
}

// The documented forms work against a cluster: shoal job ID --json,
// shoal kill ID --addr URL, shoal logs ID -f.
func TestFlagsAfterArguments(t *testing.T) {
	c := testcluster.New(t, 2, testcluster.Options{})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	out, errOut, code := shoal(t, env, "submit", "-n", "1", "--mpi", "none", "--", "sleep", "600")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	out, errOut, code = shoal(t, env, "job", id, "--json")
	var j struct {
		ID   uint64 `json:"id"`
		Spec struct {
			Cmd []string `json:"cmd"`
		} `json:"spec"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || len(j.Spec.Cmd) != 2 || j.Spec.Cmd[1] != "600" {
		t.Fatalf("shoal job %s --json: exit %d, stdout %q, stderr %q", id, code, out, errOut)
	}
	if _, errOut, code = shoal(t, env, "kill", id, "--addr", c.Client(0).Base); code != 0 {
		t.Fatalf("shoal kill %s --addr URL: exit %d, stderr %q", id, code, errOut)
	}
	testcluster.WaitFor(t, 10*time.Second, "job killed", func() bool {
		js, err := c.Client(0).Jobs(context.Background())
		return err == nil && len(js) == 1 && js[0].State == "killed"
	})
	if _, errOut, code = shoal(t, env, "logs", id, "-f"); code != 0 && strings.Contains(errOut, "give one job ID") {
		t.Fatalf("shoal logs %s -f: exit %d, stderr %q", id, code, errOut)
	}
	// A program's flags stay the program's.
	if _, errOut, code = shoal(t, env, "submit", "-n", "1", "--mpi", "none", "--", "sleep", "--json"); code != 0 {
		t.Fatalf("submit -- sleep --json: exit %d, stderr %q", code, errOut)
	}
}
