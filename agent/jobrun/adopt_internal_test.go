package jobrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// waitFile waits, up to a minute, for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

// An attempt left running by an earlier life that the cluster no longer
// runs here is killed outright: its job's SIGTERM handler would run beside
// the attempt's retry. The job's group is stopped first, as the fence guard
// stops an attempt that ran past the node's lease.
func TestAdoptKillsAStaleAttemptWithoutTerm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker, ready := filepath.Join(dir, "marker"), filepath.Join(dir, "ready")
	job := exec.Command("sh", "-c", `trap 'echo term > "$1"; exit 0' TERM; : > "$2"; while :; do sleep 0.05; done`, "sh", marker, ready)
	job.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // its own group, as a supervisor's
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-job.Process.Pid, syscall.SIGKILL) })
	waitFile(t, ready)
	if err := syscall.Kill(-job.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	n := testNode(t, raftfsm.New(), func() {}) // no job: the attempt is not this node's to run
	k := Key{Job: 7, Attempt: 1}
	rec := &jobexec.Record{PID: job.Process.Pid}
	n.adopt(context.Background(), adoption{k: k, state: jobexec.State{Record: rec, Alive: true}})

	err := job.Wait()
	ws, _ := job.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("stale job ended with %v, want killed by SIGKILL", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the stale job's SIGTERM handler ran")
	}
	if _, ok := n.supervisedGroups()[k]; ok {
		t.Error("the killed attempt is still among the supervised")
	}
}

// A supervised attempt's records, holding how its job ended, stay until
// raft has answered its outcome: an agent that stops before then (a
// restart just after the job ended) leaves them for its next life to
// report, rather than one that fails the finished job with retry.
func TestSupervisorRecordsStayUntilTheOutcomeIsAnswered(t *testing.T) {
	t.Parallel()
	k := Key{Job: 7, Attempt: 1}
	body := raftfsm.FinishAttempt{ID: k.Job, Attempt: k.Attempt, ExitCode: new(int)}
	records := func(t *testing.T, n *Node) string {
		t.Helper()
		dir := n.supervisorDir(k)
		if err := jobexec.PrepareStateDir(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "status.json"), []byte(`{"exit_code":0}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	t.Run("stopped before the answer", func(t *testing.T) {
		t.Parallel()
		n := testNode(t, raftfsm.New(), func() {}) // its Propose never reaches a leader
		dir := records(t, n)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the agent stops
		n.reportOutcome(ctx, n.log, k, raftfsm.CmdFinishAttempt, body)
		if _, err := os.Stat(filepath.Join(dir, "status.json")); err != nil {
			t.Errorf("the records of an outcome raft never answered are gone: %v", err)
		}
	})
	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		n := testNode(t, raftfsm.New(), func() {})
		n.d.Propose = func(context.Context, []byte) (api.ApplyResult, error) { return api.ApplyResult{}, nil }
		dir := records(t, n)
		n.reportOutcome(context.Background(), n.log, k, raftfsm.CmdFinishAttempt, body)
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the records of a committed outcome stay: %v", err)
		}
	})
}

// node_restarted's list of adopted attempts is in order of job and
// attempt, for job IDs far apart too (a difference that overflows int).
func TestAdoptedRefsInOrder(t *testing.T) {
	t.Parallel()
	found := map[Key]adoption{}
	for _, k := range []Key{{Job: 1<<63 + 2, Attempt: 1}, {Job: 1, Attempt: 2}, {Job: 1, Attempt: 1}, {Job: 5, Attempt: 1}} {
		found[k] = adoption{k: k}
	}
	want := []raftfsm.AttemptRef{{ID: 1, Attempt: 1}, {ID: 1, Attempt: 2}, {ID: 5, Attempt: 1}, {ID: 1<<63 + 2, Attempt: 1}}
	if got := adoptedRefs(found); !slices.Equal(got, want) {
		t.Errorf("adoptedRefs = %v, want %v", got, want)
	}
}
