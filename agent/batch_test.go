package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestBatchScriptRunsMPICHAndOpenMPISteps: a batch script with #SHOAL
// directives runs once on its allocation's head, with the allocation in
// its environment, and an MPICH step and an Open MPI step inside it use
// the allocation without naming hosts, as under sbatch. The command line's
// --ppn overrides the script's.
func TestBatchScriptRunsMPICHAndOpenMPISteps(t *testing.T) {
	t.Parallel()
	mpich, ompi := ring(t, "mpich"), ring(t, "openmpi")
	c := jobCluster(t, 2, nil)
	dir := t.TempDir()
	script := filepath.Join(dir, "steps.sh")
	os.WriteFile(script, []byte(fmt.Sprintf(`#!/bin/sh
#SHOAL -n 4 --ppn 1 -J steps   # ppn 1 would need 4 nodes: the command line's --ppn 2 must win
#SHOAL --env GREETING='hello there' --timeout 2m
echo "name=$SHOAL_JOB_NAME id=$SHOAL_JOB_ID nodes=$SHOAL_NODELIST ntasks=$SHOAL_NTASKS nnodes=$SHOAL_NNODES submit=$SHOAL_SUBMIT_DIR greeting=$GREETING"
echo "hostfile:"; cat "$SHOAL_HOSTFILE"
echo "once on $SHOAL_NODE"
mpiexec.mpich %s 2 || exit 12
# The test's two nodes share one machine: Open MPI's shared-memory transport
# between ranks it believes on different nodes crashes, so TCP only.
OMPI_MCA_btl=self,tcp mpirun.openmpi %s 2 || exit 13
echo "steps done"
mpiexec.mpich -n 1 sh -c 'exit 3'
echo "third step exited $?"
`, mpich, ompi)), 0o755)
	out, errOut, code := shoalCLI(t, c, 0, "submit", "--ppn", "2", "--workdir", dir, script)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q", out)
	}
	j := waitState(t, c, 0, id, 3*time.Minute, "done", "failed")
	var logs strings.Builder
	_ = c.Client(0).Stream(context.Background(), fmt.Sprintf("/v1/jobs/%d/logs?stream=stdout&attempt=%d", id, j.Attempt), &logs)
	var errs strings.Builder
	_ = c.Client(0).Stream(context.Background(), fmt.Sprintf("/v1/jobs/%d/logs?stream=stderr&attempt=%d", id, j.Attempt), &errs)
	if j.State != "done" {
		t.Fatalf("batch job %s (%s)\nstdout:\n%s\nstderr:\n%s", j.State, j.Reason, logs.String(), errs.String())
	}
	got := logs.String()
	want := fmt.Sprintf("name=steps id=%d nodes=n[0-1] ntasks=4 nnodes=2 submit=%s greeting=hello there", id, dir)
	for _, w := range []string{want, "n0:2\nn1:2\n", "ring token 8 (want 8), allreduce 10 (want 10): ok"} {
		if !strings.Contains(got, w) {
			t.Errorf("stdout lacks %q:\n%s", w, got)
		}
	}
	if n := strings.Count(got, "once on n0"); n != 1 || strings.Count(got, "once on") != 1 {
		t.Errorf("the script ran %d times, want once (on the head):\n%s", n, got)
	}
	if n := strings.Count(got, "ring token 8 (want 8), allreduce 10 (want 10): ok"); n != 2 {
		t.Errorf("%d MPI steps succeeded, want 2 (MPICH, then Open MPI):\n%s", n, got)
	}
	// Each step's ranks on n1 were started through n1's agent, so they name
	// n1: Open MPI's daemon there, and MPICH's proxy, whose -genvlist (shoal
	// step's) leaves out the head's SHOAL_NODE.
	mpichOut, ompiOut, _ := strings.Cut(got, "ring token 8")
	if n := strings.Count(mpichOut, "(shoal node n1)"); n != 2 {
		t.Errorf("%d ranks of the MPICH step name n1, want 2:\n%s", n, got)
	}
	if n := strings.Count(ompiOut, "(shoal node n1)"); n != 2 {
		t.Errorf("%d ranks of the Open MPI step name n1, want 2:\n%s", n, got)
	}
	if !strings.Contains(got, "third step exited 3") {
		t.Errorf("the failing step's status did not reach the script:\n%s", got)
	}
	// The three launches are the job's steps, in order, with their exits.
	steps := j.Attempts[len(j.Attempts)-1].Steps
	wantSteps := []struct {
		launcher string
		exit     int
	}{{"mpiexec.mpich", 0}, {"mpirun.openmpi", 0}, {"mpiexec.mpich", 3}}
	if len(steps) != len(wantSteps) {
		t.Fatalf("job %d has steps %+v, want %d", id, steps, len(wantSteps))
	}
	for i, w := range wantSteps {
		st := steps[i]
		if st.ID != fmt.Sprintf("%d.%d", id, i) || len(st.Cmd) == 0 || st.Cmd[0] != w.launcher || st.ExitCode == nil || *st.ExitCode != w.exit ||
			st.Nodes != "n[0-1]" || st.StartedAt == nil || st.EndedAt == nil {
			t.Errorf("step %d: %+v, want %s exiting %d on n[0-1]", i, st, w.launcher, w.exit)
		}
	}
	text, errOut, code := shoalCLI(t, c, 0, "job", strconv.FormatUint(id, 10))
	if code != 0 || !strings.Contains(text, fmt.Sprintf("step %d.2 exit 3", id)) || !strings.Contains(text, fmt.Sprintf("step %d.1 exit 0", id)) {
		t.Errorf("shoal job (exit %d, %s) does not list the steps:\n%s", code, errOut, text)
	}
}

// TestJobEnvironmentLive: array tasks see their array and task IDs, every
// job its name and node list; --export ALL (the default) carries the
// submitter's environment and --export NONE clears it.
func TestJobEnvironmentLive(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 2, nil)
	submit := func(args ...string) uint64 {
		t.Helper()
		cmd := exec.Command(testcluster.BuildShoal(t), append([]string{"submit"}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "SHOAL_ADDR="+c.Client(0).Base, "SHOAL_TOKEN="+c.Token(),
			"SHOAL_AGENTS_CACHE="+filepath.Join(cmd.Dir, "agents.json"), "MODULE_STATE=gcc/12")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("submit %q: %v", args, err)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			t.Fatalf("submit printed %q", out)
		}
		return id
	}
	stdout := func(id uint64) string {
		t.Helper()
		j := waitState(t, c, 0, id, time.Minute, "done", "failed")
		var b strings.Builder
		_ = c.Client(0).Stream(context.Background(), fmt.Sprintf("/v1/jobs/%d/logs?stream=stdout&attempt=%d", id, j.Attempt), &b)
		if j.State != "done" {
			t.Fatalf("job %d %s (%s): %s", id, j.State, j.Reason, b.String())
		}
		return b.String()
	}
	show := `echo "array=${SHOAL_ARRAY_JOB_ID-none} task=${SHOAL_ARRAY_TASK_ID-none} name=$SHOAL_JOB_NAME nodes=$SHOAL_NODELIST module=${MODULE_STATE-unset}"`
	arr := submit("-n", "1", "--mpi", "none", "-J", "sweep", "--array", "0-2%2", "--", "sh", "-c", show)
	for i := range 3 {
		out := stdout(arr + uint64(i))
		want := fmt.Sprintf("array=%d task=%d name=sweep nodes=n", arr, i)
		if !strings.Contains(out, want) || !strings.Contains(out, "module=gcc/12") {
			t.Errorf("task %d printed %q, want %q and the submitter's MODULE_STATE", i, out, want)
		}
	}
	none := submit("-n", "2", "--ppn", "1", "--mpi", "none", "--export", "NONE", "--", "sh", "-c", show)
	if out := stdout(none); strings.Count(out, "array=none task=none name=sh nodes=n[0-1] module=unset") != 2 {
		t.Errorf("--export NONE job printed %q, want the submitter's variables gone", out)
	}
}

// TestOutputFilesLive: --output and --error files appear in the submit
// directory with their patterns expanded, owned by the job's user, while
// the attempt's logs keep the output; without --error, stderr joins the
// --output file, as with sbatch.
func TestOutputFilesLive(t *testing.T) {
	t.Parallel()
	nobody, err := user.Lookup("nobody")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and the user nobody")
	}
	c := jobCluster(t, 2, nil)
	dir, err := os.MkdirTemp("", "shoal-outfiles-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	spec := api.JobSpec{Cmd: []string{"/bin/sh", "-c", "echo out-line; echo err-line >&2"}, NP: 1, MPI: "none", Workdir: dir,
		Name: "named", Output: "o-%x-%j-%u-%N.txt", Error: "e-%A_%a.txt", MaxAttempts: 1}
	submitAs := func(spec api.JobSpec) uint64 {
		res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), Owner: "nobody", Spec: spec})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return res.ID
	}
	id := submitAs(spec)
	j := waitState(t, c, 0, id, time.Minute, "done", "failed")
	if j.State != "done" {
		t.Fatalf("job %s: %s", j.State, j.Reason)
	}
	head := j.Attempts[len(j.Attempts)-1].Head
	uid := nobody.Uid
	for name, want := range map[string]string{
		fmt.Sprintf("o-named-%d-nobody-%s.txt", id, head): "out-line\n",
		fmt.Sprintf("e-%d_0.txt", id):                     "err-line\n",
	} {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil || string(b) != want {
			entries, _ := os.ReadDir(dir)
			t.Errorf("%s: %q, %v; want %q (directory holds %v)", name, b, err, want, entries)
			continue
		}
		if st, err := os.Stat(p); err != nil || fmt.Sprint(st.Sys().(*syscall.Stat_t).Uid) != uid {
			t.Errorf("%s is not owned by nobody (uid %s)", name, uid)
		}
	}
	var logs strings.Builder
	_ = c.Client(0).Stream(context.Background(), fmt.Sprintf("/v1/jobs/%d/logs?stream=stdout&attempt=%d", id, j.Attempt), &logs)
	if logs.String() != "out-line\n" {
		t.Errorf("the attempt's log holds %q, want the output too", logs.String())
	}
	// Without --error, stderr goes to the --output file.
	spec.Output, spec.Error = "both-%j.txt", ""
	id = submitAs(spec)
	if j := waitState(t, c, 0, id, time.Minute, "done", "failed"); j.State != "done" {
		t.Fatalf("job %s: %s", j.State, j.Reason)
	}
	b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("both-%d.txt", id)))
	if !strings.Contains(string(b), "out-line") || !strings.Contains(string(b), "err-line") {
		t.Errorf("--output without --error holds %q, want both streams", b)
	}
}

// TestRunForwardsStdinToRankZero: shoal run's standard input reaches rank
// 0 of an MPICH, an Open MPI and a plain (--mpi none) job, through the
// head's launcher (copy 0 of a plain job); rank 0 finds SHOAL_HOSTFILE in
// the flavour's format under every flavour.
func TestRunForwardsStdinToRankZero(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 2, nil)
	for _, tc := range []struct{ flavour, rankVar, launcher, hostfile string }{
		{"mpich", "PMI_RANK", "mpiexec.mpich", "n0:1 n1:1 "},
		{"openmpi", "OMPI_COMM_WORLD_RANK", "mpirun.openmpi", "n0 slots=1 n1 slots=1 "},
		{"none", "SHOAL_RANK", "", "n0:1 n1:1 "},
	} {
		if _, err := exec.LookPath(tc.launcher); tc.launcher != "" && err != nil {
			t.Logf("%s not installed", tc.flavour)
			continue
		}
		prog := fmt.Sprintf(`if [ "$%s" = 0 ]; then echo "rank 0 got: $(cat)"; echo "hostfile: $(tr '\n' ' ' < "$SHOAL_HOSTFILE")"; else echo "rank $%s read nothing"; fi`, tc.rankVar, tc.rankVar)
		cmd := exec.Command(testcluster.BuildShoal(t), "run", "-n", "2", "--ppn", "1", "--mpi", tc.flavour, "--timeout", "1m", "--", "sh", "-c", prog)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "SHOAL_ADDR="+c.Client(1).Base, "SHOAL_TOKEN="+c.Token(),
			"SHOAL_AGENTS_CACHE="+filepath.Join(cmd.Dir, "agents.json"))
		cmd.Stdin = strings.NewReader("line one\nline two\n")
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: shoal run: %v\nstdout:\n%s\nstderr:\n%s", tc.flavour, err, so.String(), se.String())
		}
		if !strings.Contains(so.String(), "rank 0 got: line one\nline two") || !strings.Contains(so.String(), "rank 1 read nothing") {
			t.Errorf("%s: stdout %q, want rank 0 to have read the input", tc.flavour, so.String())
		}
		// The allocation, on the head, where rank 0 runs (placement puts
		// the head first; both agents run on this machine, so n0 or n1).
		if got := so.String(); !strings.Contains(got, "hostfile: "+tc.hostfile) && !strings.Contains(got, "hostfile: "+strings.NewReplacer("n0", "n1", "n1", "n0").Replace(tc.hostfile)) {
			t.Errorf("%s: stdout %q, want SHOAL_HOSTFILE to hold %q; stderr %s", tc.flavour, got, tc.hostfile, se.String())
		}
	}
}

// TestRunWithoutInputMPICH: a shoal run whose standard input is the null
// device forwards none, and MPICH's mpiexec gets a write-only null device.
// Quick jobs whose ranks read nothing must not meet Hydra's write of an end
// of file to a proxy it has already closed (exit 255 after a good run, in
// about one run of three when the client sent its empty input after the
// ranks ended); five runs make that race likely. Rank 0 that reads its
// input gets end of file at once.
func TestRunWithoutInputMPICH(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("mpiexec.mpich"); err != nil {
		t.Skip("mpiexec.mpich not installed (make deps installs it)")
	}
	c := jobCluster(t, 2, nil)
	for i := range 6 {
		prog, want := `echo "rank $PMI_RANK"`, "rank 3"
		if i == 5 {
			prog, want = `if [ "$PMI_RANK" = 0 ]; then echo "rank 0 got [$(cat)]"; fi`, "rank 0 got []"
		}
		out, errOut, code := shoalCLI(t, c, i%2, "run", "-n", "4", "--ppn", "2", "--mpi", "mpich", "--timeout", "1m", "--", "sh", "-c", prog)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("run %d: exit %d, stdout %q, want %q\nstderr:\n%s", i, code, out, want, errOut)
		}
	}
}

// TestFairShareInterleavesUsersLive: root's array fills the cluster
// first; once its tasks have run, nobody's (no usage) go before the rest
// of root's, though submitted after all of them.
func TestFairShareInterleavesUsersLive(t *testing.T) {
	t.Parallel()
	if _, err := user.Lookup("nobody"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and the user nobody")
	}
	c := jobCluster(t, 2, nil)
	// Each task takes a node's worth of slots (placement ignores held slots under --ppn), so two run at a time.
	nodes, err := c.Client(0).Nodes(context.Background())
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	slots := max(nodes[0].Cores, nodes[0].Threads)
	submit := func(owner string) uint64 {
		res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: t.Name() + owner, Owner: owner, Spec: api.JobSpec{
			Cmd: []string{"/bin/sleep", "1"}, NP: slots, MPI: "none", Workdir: "/", MaxAttempts: 1,
			Array: &api.ArraySpec{Tasks: []int{0, 1, 2, 3, 4, 5}}}})
		if err != nil {
			t.Fatalf("submit as %s: %v", owner, err)
		}
		return res.ID
	}
	rootArr, nobodyArr := submit("root"), submit("nobody")
	var jobs []api.Job
	testcluster.WaitFor(t, 3*time.Minute, "both arrays done", func() bool {
		js, err := c.Client(0).Jobs(context.Background())
		if err != nil {
			return false
		}
		jobs = js
		for _, j := range js {
			if j.State != "done" {
				return false
			}
		}
		return len(js) == 12
	})
	placed := func(j api.Job) time.Time { return *j.Attempts[0].PlacedAt }
	var order []string
	slices.SortStableFunc(jobs, func(a, b api.Job) int { return placed(a).Compare(placed(b)) })
	for _, j := range jobs {
		order = append(order, fmt.Sprintf("%s@%s", j.Owner, placed(j).Sub(placed(jobs[0])).Round(10*time.Millisecond)))
	}
	// First come, first served would place all 6 of root's before any of nobody's.
	if i := slices.IndexFunc(jobs, func(j api.Job) bool { return j.Owner == "nobody" }); i < 0 || i >= 6 {
		t.Fatalf("placement order %v: nobody's first task placed %dth, want before root's last (arrays %d, %d)", order, i+1, rootArr, nobodyArr)
	}
	t.Logf("placement order: %v", order)
}

// TestLogsWithoutFollowAnswerAtOnce: a read of a running job's output
// without follow (follow=0, what `shoal logs ID` sends) returns what there
// is now instead of waiting for the job to end.
func TestLogsWithoutFollowAnswerAtOnce(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, nil)
	out, errOut, code := shoalCLI(t, c, 0, "submit", "--mpi", "none", "-n", "1", "--", "sh", "-c", "echo ready; exec sleep 600")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("submit printed %q", out)
	}
	t.Cleanup(func() { shoalCLI(t, c, 0, "kill", strconv.FormatUint(id, 10)) })
	j := waitState(t, c, 0, id, time.Minute, "running")
	deadline := time.Now().Add(time.Minute)
	for {
		var b strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Client(0).Stream(ctx, fmt.Sprintf("/v1/jobs/%d/logs?stream=stdout&attempt=%d&follow=0", id, j.Attempt), &b)
		cancel()
		if err != nil {
			t.Fatalf("logs without follow of a running job: %v (it waited for the job to end)", err)
		}
		if strings.Contains(b.String(), "ready") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no output within a minute: %q", b.String())
		}
	}
}
