package jobrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// warmNode is a test node, confined when the machine lets it, with a job
// of the test's own user placed on it and acknowledged, not started, and
// its warm helper up.
func warmNode(t *testing.T, spec raftfsm.JobSpec) (*Node, func(string, any) raftfsm.Result, Key, []int) {
	t.Helper()
	n, apply, k := ackedNode(t, spec)
	n.warmUp(k)
	pids := n.warmPids()[k]
	if len(pids) == 0 {
		t.Fatal("no warm helper for an acknowledged attempt")
	}
	return n, apply, k, pids
}

// ackedNode is a test node, confined when the machine lets it, with a job
// of the test's own user placed on it and acknowledged, not started.
func ackedNode(t *testing.T, spec raftfsm.JobSpec) (*Node, func(string, any) raftfsm.Result, Key) {
	t.Helper()
	n, apply, k := placedNode(t, spec)
	apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: k.Job, Attempt: 1, Node: "n0"})
	return n, apply, k
}

// placedNode is ackedNode before this node's acknowledgement.
func placedNode(t *testing.T, spec raftfsm.JobSpec) (*Node, func(string, any) raftfsm.Result, Key) {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	f := raftfsm.New()
	apply := applier(t, f)
	n := testNode(t, f, func() {})
	if os.Geteuid() == 0 {
		m, err := OpenCgroups("n0", n.cfg.DataDir, confine.DefaultConfig())
		if err != nil {
			t.Logf("unconfined: %v", err)
		} else {
			t.Cleanup(func() { _ = m.Close() })
			n.cfg.Cgroups = m
		}
	}
	id := apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: "warm", Owner: me.Username, Spec: spec}).JobID
	apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: spec.NP}}})
	t.Cleanup(func() { n.dropWarm(nil); n.wg.Wait() })
	return n, apply, Key{Job: id, Attempt: 1}
}

// oneCopy is a job of one copy of a command, in /, that reads the
// client's standard input: the agent feeds it, so it runs as the agent's
// child, not under a supervisor.
var oneCopy = raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1, Workdir: "/", Stdin: true}

// A refused acknowledgement (a GPU another attempt holds) warms nothing:
// the cgroup's device rules would follow GPUs this node does not hold, and
// a cgroup made is kept for the attempt.
func TestRefusedAcknowledgementWarmsNothing(t *testing.T) {
	t.Parallel()
	n, _, k := placedNode(t, oneCopy)
	n.d.Propose = func(context.Context, []byte) (api.ApplyResult, error) {
		return api.ApplyResult{Err: "gpu 0 of n0 is held by job 9"}, nil
	}
	n.reserve(context.Background(), k, []int{0})
	n.wg.Wait()
	if pids := n.warmPids()[k]; len(pids) != 0 {
		t.Fatalf("warm helpers %v after the node's acknowledgement was refused", pids)
	}
}

// A single copy that runs under a supervisor warms no helper, and its
// process is the supervisor's: started from a warm helper, the agent's
// child, it would die with the agent instead of being adopted.
func TestSupervisedCopyWarmsNoHelper(t *testing.T) {
	t.Parallel()
	n, apply, k := ackedNode(t, raftfsm.JobSpec{Cmd: []string{"sh", "-c", "exit 3"}, NP: 1, Workdir: "/"})
	n.warmUp(k)
	if pids := n.warmPids()[k]; len(pids) != 0 {
		t.Fatalf("a supervised single copy has warm helpers %v: its process would not be its supervisor's", pids)
	}
	apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: k.Job, Attempt: 1})
	n.warmUp(k) // as a late reservation would, once the attempt runs
	j, err := n.runnable(k)
	if err != nil {
		t.Fatal(err)
	}
	if !runsSupervised(j) {
		t.Fatal("the single copy does not run under a supervisor")
	}
	dir := t.TempDir()
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, err := n.runCopies(ctx, j, j.Current(), stdout, stderr)
	if err != nil || code != 3 {
		t.Fatalf("runCopies = %d, %v; want 3", code, err)
	}
	st, err := jobexec.ReadState(n.supervisorDir(k))
	if err != nil || st.Status == nil || st.Status.ExitCode != 3 {
		t.Errorf("the supervisor's records: %+v, %v; want its job's exit 3 there", st, err)
	}
	if pids := n.warmPids()[k]; len(pids) != 0 {
		t.Errorf("warm helpers %v of a supervised attempt", pids)
	}
	// Its usage is recorded at its end: the cgroup knows its process started.
	if n.cfg.Cgroups != nil {
		n.cgroups.mu.Lock()
		ac := n.cgroups.live[k]
		n.cgroups.mu.Unlock()
		if ac == nil || ac.started.IsZero() {
			t.Errorf("the supervised attempt's cgroup %+v does not know its process started: no usage would be recorded", ac)
		}
	}
}

// A warm helper, and the cgroup made for it, go when the attempt is
// killed before it starts: the helper is killed and reaped, the cgroup
// removed.
func TestWarmHelperGoesWithAnAttemptKilledBeforeItStarts(t *testing.T) {
	t.Parallel()
	n, apply, k, pids := warmNode(t, oneCopy)
	pid := pids[0]
	if n.cfg.Cgroups != nil {
		cg := n.cgroupKeys()
		if len(cg) != 1 || cg[0] != k {
			t.Fatalf("cgroups %v, want the attempt's, made with its warm helper", cg)
		}
		dir := n.cgroups.live[k].cg.Dirs()[0]
		waitUntil(t, func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			return bytes.Contains(b, []byte(strconv.Itoa(pid)+"\n"))
		}, "the warm helper in the attempt's cgroup")
	}
	var usage atomic.Int32
	n.d.Propose = func(_ context.Context, b []byte) (api.ApplyResult, error) {
		if c, err := raftfsm.Decode(b); err == nil && c.Type == raftfsm.CmdRecordUsage {
			usage.Add(1)
		}
		return api.ApplyResult{}, nil
	}
	me, _ := user.Current()
	apply(raftfsm.CmdKillJob, raftfsm.KillJob{ID: k.Job, User: me.Username})
	n.reconcile(context.Background())
	n.wg.Wait()
	if _, ok := n.warmPids()[k]; ok {
		t.Error("the killed attempt still has a warm helper")
	}
	// Reaped, not a zombie: the pid is gone.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the warm helper %d of a killed attempt: kill(0) = %v, want it gone", pid, err)
	}
	if n.cfg.Cgroups != nil {
		if names, err := n.cfg.Cgroups.List(); err != nil || len(names) != 0 {
			t.Errorf("cgroups left after the attempt was killed: %v %v", names, err)
		}
	}
	if c := usage.Load(); c != 0 {
		t.Errorf("%d usage records proposed for an attempt that started nothing here", c)
	}
}

// A started attempt's first process here runs on its warm helper, as the
// owner would see a process started the ordinary way.
func TestAttemptRunsOnItsWarmHelper(t *testing.T) {
	t.Parallel()
	n, apply, k, pids := warmNode(t, oneCopy)
	pid := pids[0]
	apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: k.Job, Attempt: 1})
	j, err := n.runnable(k)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := n.Command(j, k, []string{"sh", "-c", `echo $$ $SHOAL_JOB_ID; pwd`}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, err := n.RunStreaming(ctx, k, cmd, &out, &errOut)
	if err != nil || code != 0 {
		t.Fatalf("RunStreaming = %d, %v; stderr %q", code, err, errOut.String())
	}
	if want := strconv.Itoa(pid) + " " + strconv.FormatUint(k.Job, 10) + "\n/\n"; out.String() != want {
		t.Errorf("the job printed %q, want %q: its pid the warm helper's", out.String(), want)
	}
	if _, ok := n.warmPids()[k]; ok {
		t.Error("a used warm helper is still in the table")
	}
}

// The head of an MPICH job warms two helpers (the launcher and the
// proxy Hydra may start through the remote shell); none is killed before
// the attempt runs, nor in the pass that first sees it running however
// long start_job took, and one still unused warmSpare after that is.
func TestUnusedWarmHelperOfARunningAttemptGoes(t *testing.T) {
	t.Parallel()
	n, apply, k, pids := warmNode(t, raftfsm.JobSpec{Cmd: []string{"true"}, NP: 2, MPI: "mpich", Workdir: "/"})
	if len(pids) != 2 {
		t.Fatalf("the head of an MPICH job has %d warm helpers, want 2", len(pids))
	}
	later := time.Now().Add(2 * warmSpare)
	n.now = func() time.Time { return later }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n.reconcile(ctx) // launching: both kept however old
	if got := n.warmPids()[k]; len(got) != 2 {
		t.Fatalf("warm helpers of an attempt not yet running: %v, want both kept", got)
	}
	apply(raftfsm.CmdStartJob, raftfsm.StartJob{ID: k.Job, Attempt: 1})
	n.mu.Lock()
	n.launched[k] = true // the launcher is not the test's
	n.mu.Unlock()
	n.reconcile(ctx) // the pass that starts the attempt's processes: kept for them
	if got := n.warmPids()[k]; len(got) != 2 {
		t.Fatalf("warm helpers of an attempt just seen running: %v, want both kept (they started %v before, waiting for start_job)", got, 2*warmSpare)
	}
	later = later.Add(warmSpare)
	n.reconcile(ctx)
	n.wg.Wait()
	if got := n.warmPids()[k]; len(got) != 0 {
		t.Errorf("warm helpers %v still there %v after the attempt was seen running", got, warmSpare)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("spare warm helper %d: kill(0) = %v, want it gone", pid, err)
		}
	}
}

// waitUntil polls cond, a state of another process that announces nothing,
// until it holds or 10 s pass.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// How many helpers a node warms for an attempt: the processes it starts
// as the launch begins.
func TestWarmCount(t *testing.T) {
	t.Parallel()
	n := testNode(t, raftfsm.New(), func() {})
	job := func(spec raftfsm.JobSpec, hosts ...raftfsm.Host) *raftfsm.Job {
		return &raftfsm.Job{Attempt: 1, Spec: spec, Attempts: []raftfsm.Attempt{{N: 1, Head: hosts[0].Node, Hosts: hosts}}}
	}
	here, there := raftfsm.Host{Node: "n0", NP: 3}, raftfsm.Host{Node: "n1", NP: 9}
	for _, tc := range []struct {
		name string
		j    *raftfsm.Job
		want int
	}{
		{"MPICH head: launcher and its own proxy", job(raftfsm.JobSpec{MPI: "mpich"}, here, there), 2},
		{"MPICH other host: the proxy", job(raftfsm.JobSpec{MPI: "mpich"}, there, here), 1},
		{"Open MPI head: mpirun is its daemon", job(raftfsm.JobSpec{MPI: "openmpi"}, here, there), 1},
		{"Open MPI other host: the daemon", job(raftfsm.JobSpec{MPI: "openmpi"}, there, here), 1},
		{"copies: one a rank here", job(raftfsm.JobSpec{}, there, here), 3},
		{"copies: at most maxWarm", job(raftfsm.JobSpec{}, raftfsm.Host{Node: "n0", NP: 64}), maxWarm},
		{"batch head: the script", job(raftfsm.JobSpec{Batch: true, MPI: "mpich"}, here, there), 1},
		{"batch other host: steps come later", job(raftfsm.JobSpec{Batch: true, MPI: "mpich"}, there, here), 0},
		{"a single copy: under its supervisor", job(raftfsm.JobSpec{}, raftfsm.Host{Node: "n0", NP: 1}), 0},
		{"a single copy reading stdin: the agent's child", job(raftfsm.JobSpec{Stdin: true}, raftfsm.Host{Node: "n0", NP: 1}), 1},
		{"an array's task", func() *raftfsm.Job { j := job(raftfsm.JobSpec{}, here); j.ArrayJobID = 7; return j }(), 0},
	} {
		if got := n.warmCount(tc.j); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// An array's tasks placed on a node at once warm at most maxWarmNode
// helpers between them; the rest start the ordinary way.
func TestWarmHelpersOfANodeAreBounded(t *testing.T) {
	t.Parallel()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	f := raftfsm.New()
	apply := applier(t, f)
	n := testNode(t, f, func() {})
	t.Cleanup(func() { n.dropWarm(nil); n.wg.Wait() })
	for i := range maxWarmNode + 4 {
		id := apply(raftfsm.CmdSubmitJob, raftfsm.SubmitJob{RequestID: "task" + strconv.Itoa(i), Owner: me.Username, Spec: oneCopy}).JobID
		apply(raftfsm.CmdPlaceJob, raftfsm.PlaceJob{ID: id, Attempt: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}})
		apply(raftfsm.CmdAckReservation, raftfsm.AckReservation{ID: id, Attempt: 1, Node: "n0"})
		n.warmUp(Key{Job: id, Attempt: 1})
	}
	total := 0
	for _, pids := range n.warmPids() {
		total += len(pids)
	}
	if total != maxWarmNode {
		t.Errorf("%d warm helpers wait on the node, want %d", total, maxWarmNode)
	}
}
