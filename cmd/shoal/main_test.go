package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// shoal runs the CLI in-process with captured output.
func shoal(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if _, ok := env["SHOAL_AGENTS_CACHE"]; !ok {
		t.Setenv("SHOAL_AGENTS_CACHE", filepath.Join(t.TempDir(), "agents.json")) // not the user's cache
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	var o, e bytes.Buffer
	code = run(append([]string{"shoal"}, args...), &o, &e)
	return o.String(), e.String(), code
}

func oneLine(t *testing.T, what, s string) {
	t.Helper()
	s = strings.TrimSpace(s)
	if s == "" || strings.Count(s, "\n") > 0 {
		t.Errorf("%s: want one line of error, got %q", what, s)
	}
}

func TestAgentFlagErrors(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte(testcluster.NewToken(t)+"\n"), 0o600)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o600)
	dd := t.TempDir()
	cases := map[string][]string{
		"unknown flag":        {"agent", "--frobnicate"},
		"no data dir":         {"agent", "--token-file", tok},
		"no token file":       {"agent", "--data-dir", dd},
		"empty token":         {"agent", "--data-dir", dd, "--token-file", empty},
		"missing token file":  {"agent", "--data-dir", dd, "--token-file", "/nonexistent/token"},
		"bad join port":       {"agent", "--data-dir", dd, "--token-file", tok, "--join", "host:99999"},
		"bad join":            {"agent", "--data-dir", dd, "--token-file", tok, "--join", ":7946"},
		"bad bind":            {"agent", "--data-dir", dd, "--token-file", tok, "--bind", "not-an-ip"},
		"bad pe":              {"agent", "--data-dir", dd, "--token-file", tok, "--pe", "gpu=many"},
		"same ports":          {"agent", "--data-dir", dd, "--token-file", tok, "--raft-port", "7946"},
		"bootstrap-expect 0":  {"agent", "--data-dir", dd, "--token-file", tok, "--bootstrap-expect", "0"},
		"stray argument":      {"agent", "--data-dir", dd, "--token-file", tok, "extra"},
		"not an int":          {"agent", "--http-port", "eighty"},
		"unknown command":     {"frobnicate"},
		"bad log level":       {"agent", "--data-dir", dd, "--token-file", tok, "--log-level", "loud"},
		"bad sample interval": {"agent", "--data-dir", dd, "--token-file", tok, "--sample-interval", "1ns"},
		"negative limit":      {"agent", "--data-dir", dd, "--token-file", tok, "--max-queued-jobs", "-1"},
		"no http conns":       {"agent", "--data-dir", dd, "--token-file", tok, "--http-max-conns-per-source", "0"},
		"negative idle":       {"agent", "--data-dir", dd, "--token-file", tok, "--http-idle-timeout", "-1s"},
		"no gossip streams":   {"agent", "--data-dir", dd, "--token-file", tok, "--gossip-max-streams", "0"},
		"coordinate min of 0": {"agent", "--data-dir", dd, "--token-file", tok, "--coordinate-min-of", "0"},
		"bad job rlimit":      {"agent", "--data-dir", dd, "--token-file", tok, "--job-rlimit", "nofile=4096:1024"},
		"unknown job rlimit":  {"agent", "--data-dir", dd, "--token-file", tok, "--job-rlimit", "files=10"},
	}
	for name, args := range cases {
		_, errOut, code := shoal(t, nil, args...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, exitUsage, errOut)
		}
		oneLine(t, name, errOut)
	}
}

func TestUnreachableJoinGivesUp(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte(testcluster.NewToken(t)+"\n"), 0o600)
	start := time.Now()
	_, errOut, code := shoal(t, nil, "agent", "--name", "lonely", "--bind", "127.0.0.1", "--gossip-port", "0",
		"--raft-port", "0", "--http-port", "0", "--data-dir", t.TempDir(), "--token-file", tok,
		"--join", "127.0.0.1:1", "--join-timeout", "1500ms", "--log-level", "error")
	if code != exitFailure || !strings.Contains(errOut, "could not join any of [127.0.0.1:1]") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatalf("took %v to give up", time.Since(start))
	}
}

func TestJobBadInputChangesNothing(t *testing.T) {
	c := testcluster.New(t, 2, testcluster.Options{})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": c.Token()}
	dir := t.TempDir()
	unknownHosts := filepath.Join(dir, "hosts")
	os.WriteFile(unknownHosts, []byte("n0:2\nghost:2\n"), 0o644)
	badScript := filepath.Join(dir, "job.sh")
	os.WriteFile(badScript, []byte("#!/bin/sh\n#SHOAL -n 2\n#SHOAL --foo\ntrue\n"), 0o755)
	badSbatch := filepath.Join(dir, "job.slurm")
	os.WriteFile(badSbatch, []byte("#!/bin/sh\n#SBATCH -n 2\n#SBATCH --ntask-per-node=2\ntrue\n"), 0o755)
	badHosts := filepath.Join(dir, "bad")
	os.WriteFile(badHosts, []byte("n0:two\n"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"unknown flag", []string{"run", "--bogus", "-n", "2", "--", "true"}, exitUsage},
		{"-n 0", []string{"run", "-n", "0", "--", "true"}, exitUsage},
		{"no -n", []string{"submit", "--", "true"}, exitUsage},
		{"missing command", []string{"run", "-n", "2"}, exitUsage},
		{"missing executable", []string{"submit", "-n", "2", "--", "/no/such/program"}, exitUsage},
		{"hostfile with unknown host", []string{"submit", "-n", "2", "-f", unknownHosts, "--", "true"}, exitUsage},
		{"malformed hostfile", []string{"submit", "-n", "2", "-f", badHosts, "--", "true"}, exitUsage},
		{"bad relax", []string{"submit", "-n", "2", "-r", "sideways", "--", "true"}, exitUsage},
		{"bad mpi", []string{"submit", "-n", "2", "--mpi", "lam", "--", "true"}, exitUsage},
		{"bad pe", []string{"submit", "-n", "2", "--pe", "gpu", "--", "true"}, exitUsage},
		{"bad alpha", []string{"submit", "-n", "2", "--alpha", "2", "--", "true"}, exitUsage},
		{"job id not a number", []string{"job", "twelve"}, exitUsage},
		{"kill needs an id", []string{"kill"}, exitUsage},
		{"alloc -n 0", []string{"alloc", "-n", "0"}, exitUsage},
		{"socket address without a path", []string{"jobs", "--addr", "unix://"}, exitUsage},
		{"address neither URL nor socket", []string{"jobs", "--addr", "127.0.0.1:7948"}, exitUsage},
		{"array backwards", []string{"submit", "-n", "1", "--array", "5-1", "--", "true"}, exitUsage},
		{"array limit 0", []string{"submit", "-n", "1", "--array", "0-9%0", "--", "true"}, exitUsage},
		{"begin in the past", []string{"submit", "-n", "1", "--begin", "2020-01-01", "--", "true"}, exitUsage},
		{"begin unparseable", []string{"submit", "-n", "1", "--begin", "teatime", "--", "true"}, exitUsage},
		{"unknown dependency", []string{"submit", "-n", "1", "--dependency", "before:1", "--", "true"}, exitUsage},
		{"dependency cycle", []string{"submit", "-n", "1", "--dependency", "afterok:1", "--", "true"}, exitUsage},
		{"dependency unknown job", []string{"submit", "-n", "1", "--dependency", "afterany:4000", "--", "true"}, exitUsage},
		{"name with slash", []string{"submit", "-n", "1", "-J", "a/b", "--", "true"}, exitUsage},
		{"hold needs an id", []string{"hold"}, exitUsage},
		{"release a task not a number", []string{"release", "12_x"}, exitUsage},
		{"kill no such job", []string{"kill", "77"}, exitUsage},
		{"directive with an unknown flag", []string{"submit", badScript}, exitUsage},
		{"unknown output pattern", []string{"submit", "-n", "1", "--output", "out-%q", "--", "true"}, exitUsage},
		{"bad export", []string{"submit", "-n", "1", "--export", "PATH,NONE", "--", "true"}, exitUsage},
		{"#SBATCH with an unknown option", []string{"submit", badSbatch}, exitUsage},
		{"nodelist naming no node", []string{"submit", "-n", "1", "-w", "n[0-1],ghost", "--", "true"}, exitUsage},
		{"exclude leaves no node", []string{"submit", "-n", "1", "-x", "n[0-1]", "--", "true"}, exitUsage},
		{"bad time limit", []string{"submit", "-n", "1", "-t", "1:2:3:4", "--", "true"}, exitUsage},
		{"hostfile and nodelist", []string{"submit", "-n", "1", "-w", "n0", "-f", unknownHosts, "--", "true"}, exitUsage},
		{"MPI flavour unknown", []string{"run", "-n", "4", "--", "sh", "-c", "for i in 1 2; do ./prog; done"}, exitUsage},
	}
	for _, tc := range cases {
		_, errOut, code := shoal(t, env, tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, code, tc.code, errOut)
		}
		if tc.name == "MPI flavour unknown" && !strings.Contains(errOut, "--mpi mpich|openmpi|none") {
			t.Errorf("%s: stderr %q, want it to name --mpi mpich|openmpi|none", tc.name, errOut)
		}
		if tc.name == "directive with an unknown flag" && !strings.Contains(errOut, "job.sh:3: unknown flag --foo") {
			t.Errorf("%s: stderr %q, want job.sh:3: unknown flag --foo", tc.name, errOut)
		}
		if tc.name == "#SBATCH with an unknown option" && !strings.Contains(errOut, "job.slurm:3: unknown #SBATCH option --ntask-per-node; did you mean --ntasks-per-node?") {
			t.Errorf("%s: stderr %q, want the line and the nearest option", tc.name, errOut)
		}
		oneLine(t, tc.name, errOut)
	}
	// A wrong token derives another CA: the CLI refuses the agent's
	// certificate (so never sends anything), exit 1, one line.
	_, errOut, code := shoal(t, map[string]string{"SHOAL_ADDR": c.Client(0).Base, "SHOAL_TOKEN": "not-the-cluster-token"}, "submit", "-n", "1", "--", "true")
	if code != exitFailure || !strings.Contains(errOut, "not signed by this cluster's CA") {
		t.Errorf("wrong token: exit %d, stderr %q", code, errOut)
	}
	oneLine(t, "wrong token", errOut)
	// A plain-HTTP address: one line saying to use https://, nothing sent.
	_, errOut, code = shoal(t, map[string]string{"SHOAL_ADDR": "http://127.0.0.1:7948", "SHOAL_TOKEN": c.Token()}, "jobs")
	if code != exitUsage || !strings.Contains(errOut, "use https://127.0.0.1:7948") {
		t.Errorf("http:// address: exit %d, stderr %q", code, errOut)
	}
	oneLine(t, "http address", errOut)
	if js, err := c.Client(1).Jobs(context.Background()); err != nil || len(js) != 0 {
		t.Fatalf("bad input changed the cluster: %d jobs (%v)", len(js), err)
	}
}

func TestListingsAlignAndJSON(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.Options{})
	c.WaitLeader(45 * time.Second)
	env := map[string]string{"SHOAL_ADDR": c.Client(1).Base, "SHOAL_TOKEN": c.Token()}
	testcluster.WaitFor(t, 15*time.Second, "3 members with roles", func() bool {
		out, _, code := shoal(t, env, "members")
		return code == 0 && strings.Count(out, "voter")+strings.Count(out, "leader") == 3
	})
	for _, cmd := range [][]string{{"nodes"}, {"members"}, {"jobs"}} {
		out, errOut, code := shoal(t, env, cmd...)
		if code != 0 {
			t.Fatalf("%v: %d %s", cmd, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		// nodes and members list each of the three nodes once, under the header.
		if cmd[0] != "jobs" {
			names := map[string]int{}
			for _, l := range lines[1:] {
				if f := strings.Fields(l); len(f) > 0 {
					names[f[0]]++
				}
			}
			if len(lines) != 4 || names["n0"] != 1 || names["n1"] != 1 || names["n2"] != 1 {
				t.Errorf("%v: want a header and one row for each of n0, n1, n2:\n%s", cmd, out)
			}
		}
		if cmd[0] == "nodes" {
			for _, l := range lines[1:] {
				if f := strings.Fields(l); len(f) < 4 || f[2] != "alive" || f[3] != "4/8" {
					t.Errorf("nodes: row %q, want status alive and cores 4/8 (the test inventory)", l)
				}
			}
		}
		// Columns line up: the second column starts at the same offset on every line.
		col := -1
		for _, l := range lines {
			i := strings.Index(l, "  ")
			for i >= 0 && i+1 < len(l) && l[i+1] == ' ' {
				i++
			}
			if col >= 0 && i != col {
				t.Errorf("%v: columns do not line up:\n%s", cmd, out)
				break
			}
			col = i
		}
		js, _, code := shoal(t, env, append(cmd, "--json")...)
		if code != 0 || !strings.HasPrefix(strings.TrimSpace(js), "[") {
			t.Errorf("%v --json: %d %q", cmd, code, js)
		}
	}
	out, _, _ := shoal(t, env, "nodes", "--json")
	for _, f := range []string{`"name"`, `"addr"`, `"status"`, `"cores"`, `"threads"`, `"mhz"`, `"mem_total"`, `"load"`, `"1m"`, `"5m"`, `"15m"`, `"cpu_util"`, `"mem_avail"`, `"net_flow"`, `"users"`, `"pes"`, `"kind"`, `"count"`} {
		if !strings.Contains(out, f) {
			t.Errorf("nodes --json lacks %s", f)
		}
	}
	out, _, code := shoal(t, env, "leader", "--json")
	if code != 0 || !strings.Contains(out, `"name"`) || !strings.Contains(out, `"addr"`) {
		t.Errorf("leader --json: %d %s", code, out)
	}
	out, _, code = shoal(t, env, "alloc", "-n", "4", "--force", "--format", "openmpi")
	if code != 0 || !strings.Contains(out, "slots=") {
		t.Errorf("alloc: %d %q", code, out)
	}
}
