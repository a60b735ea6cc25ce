package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// clusterState reads node i's raw replicated state.
func clusterState(t *testing.T, c *testcluster.Cluster, i int) *raftfsm.State {
	t.Helper()
	var raw json.RawMessage
	if err := c.Client(i).Do(context.Background(), "GET", "/v1/state", nil, &raw); err != nil {
		t.Fatalf("GET /v1/state: %v", err)
	}
	st := raftfsm.NewState()
	if err := json.Unmarshal(raw, st); err != nil {
		t.Fatalf("decode state: %v", err)
	}
	return st
}

// Snapshots: a snapshot saved from a cluster with finished,
// running and queued jobs restores into a new cluster that shows the same
// jobs and settings; a truncated, corrupt or foreign file is refused and
// changes nothing.
func TestSnapshotSaveRestoreIntoANewCluster(t *testing.T) {
	t.Parallel()
	// Real boltdb and file snapshots: the snapshot saved is what raft
	// wrote to disk.
	a := jobClusterOn(t, 3, false, nil)
	ctx := context.Background()
	n2 := a.Name(2)
	done := submitAPI(t, a, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1})
	failed := submitAPI(t, a, 0, api.JobSpec{Cmd: []string{"false"}, NP: 1})
	running := submitAPI(t, a, 0, api.JobSpec{Cmd: []string{"sleep", "600"}, NP: 1})
	waitState(t, a, 0, done, 30*time.Second, "done")
	waitState(t, a, 0, failed, 30*time.Second, "failed")
	waitState(t, a, 0, running, 30*time.Second, "running")
	if _, err := a.Client(0).Drain(ctx, n2, ""); err != nil {
		t.Fatal(err)
	}
	queued := submitAPI(t, a, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1, Relax: "none", Hostfile: []api.HostSlots{{Host: n2, Slots: 1}}})
	settings := raftfsm.DefaultSettings()
	settings.Alpha = 0.35
	cmd, err := raftfsm.Encode(raftfsm.CmdSetSettings, time.Now(), raftfsm.SetSettings{Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a.Client(0).Apply(ctx, cmd); err != nil || res.Err != "" {
		t.Fatalf("set settings: %v %s", err, res.Err)
	}
	testcluster.WaitFor(t, 20*time.Second, "the pinned job waiting", func() bool {
		return strings.Contains(jobState(a, 0, queued).WaitReason, "drained")
	})

	// Saved through a follower: the leader takes it.
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")
	start := time.Now()
	out, errOut, code := shoalCLI(t, a, (a.Leader()+1)%3, "operator", "snapshot", "save", file)
	if code != 0 || !strings.Contains(out, "saved the state") {
		t.Fatalf("snapshot save: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("shoal operator snapshot save through a follower in %v: %s", time.Since(start), strings.TrimSpace(out))
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v, want mode 0600", fi, err)
	}
	want := clusterState(t, a, a.Leader())

	// A new cluster, other node names.
	b := testcluster.New(t, 2, testcluster.Options{Bin: testcluster.BuildShoal(t), Prefix: "m",
		Sampler: func(int) probe.Sampler { return idle{} },
		Configure: func(_ int, cfg *agent.Config) {
			cfg.CoallocTimeout = testcluster.Stretch(6 * time.Second)
			cfg.Probes.InProcess = true
		}})
	b.WaitLeader(45 * time.Second)

	// Bad files: refused by the CLI and by the agent (a client that skips
	// the check), exit 2, nothing changed.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"truncated": data[:len(data)-100],
		"corrupt":   append(append([]byte{}, data[:len(data)-3]...), 'x', 'y', 'z'),
		"foreign":   []byte("PK\x03\x04 a zip file, not a snapshot\n"),
	}
	for name, content := range bad {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := shoalCLI(t, b, 0, "operator", "snapshot", "restore", p)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "refused") {
			t.Errorf("restore of a %s file: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, out, errOut)
		}
		_, err := b.Client(1).SnapshotRestore(ctx, content)
		var se *api.StatusError
		if !asStatus(err, &se) || se.Code != 400 || !strings.Contains(se.Msg, "refused snapshot") {
			t.Errorf("agent given a %s file: %v, want 400 refused", name, err)
		}
	}
	if st := clusterState(t, b, 0); len(st.Jobs) != 0 || st.Settings != raftfsm.DefaultSettings() {
		t.Fatalf("refused restores changed the new cluster: %d jobs, settings %+v", len(st.Jobs), st.Settings)
	}

	// The whole file, through a follower: the jobs, settings and drains are back.
	start = time.Now()
	out, errOut, code = shoalCLI(t, b, (b.Leader()+1)%2, "operator", "snapshot", "restore", file)
	if code != 0 || !strings.Contains(out, "4 jobs") {
		t.Fatalf("snapshot restore: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("shoal operator snapshot restore through a follower in %v: %s", time.Since(start), strings.TrimSpace(out))
	for i := range 2 {
		testcluster.WaitFor(t, 20*time.Second, "the restored state on every node", func() bool {
			return len(clusterState(t, b, i).Jobs) == 4
		})
	}
	got := clusterState(t, b, 1)
	if got.Settings != want.Settings || got.Settings.Alpha != 0.35 {
		t.Errorf("restored settings %+v, want %+v", got.Settings, want.Settings)
	}
	if _, ok := got.Drained(n2); !ok {
		t.Errorf("the drain of %s was not restored", n2)
	}
	for _, id := range []uint64{done, failed} {
		g, w := got.Jobs[id], want.Jobs[id]
		if g == nil || g.State != w.State || g.Owner != w.Owner || !g.EndedAt.Equal(w.EndedAt) || strings.Join(g.Spec.Cmd, " ") != strings.Join(w.Spec.Cmd, " ") {
			t.Errorf("restored job %d = %+v, want %+v", id, g, w)
		}
	}
	for _, id := range []uint64{running, queued} {
		if g := got.Jobs[id]; g == nil || g.RequestID != want.Jobs[id].RequestID || !g.SubmittedAt.Equal(want.Jobs[id].SubmittedAt) {
			t.Errorf("restored job %d = %+v, want %+v", id, g, want.Jobs[id])
		}
	}
	// The queued job asks for n2, which the new cluster does not have: it
	// waits while n2 is drained in the restored state, and fails when the
	// new leader finds no such node, the reason saying so.
	if g := got.Jobs[queued]; g.State != raftfsm.StateQueued && !strings.Contains(g.Reason, n2) {
		t.Errorf("restored queued job: %s (%s), want queued, or failed for want of %s", g.State, g.Reason, n2)
	}
	// IDs go on from the backup's, never reused.
	if next := submitAPI(t, b, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1}); next <= queued {
		t.Errorf("first job after the restore got ID %d, want above %d", next, queued)
	}
	// The new cluster schedules the restored jobs: the one that ran on a
	// node it does not have runs again on one of its own.
	// The restore failed the backup's attempt on n0 (it is never run again
	// under its number) and requeued the job: wait for an attempt on a
	// node of the new cluster.
	var j api.Job
	testcluster.WaitFor(t, 60*time.Second, fmt.Sprintf("restored job %d running on a node of the new cluster", running), func() bool {
		j = jobState(b, 0, running)
		if j.State != "running" || len(j.Attempts) == 0 || len(j.Attempts[len(j.Attempts)-1].Hosts) == 0 {
			return false
		}
		return strings.HasPrefix(j.Attempts[len(j.Attempts)-1].Hosts[0].Node, "m")
	}, func() string { return fmt.Sprintf("job is %s (%s) attempts %+v", j.State, j.Reason, j.Attempts) })

	// list-peers shows the new cluster's raft configuration, not the backup's.
	out, _, code = shoalCLI(t, b, 0, "operator", "raft", "list-peers", "--json")
	var peers []api.RaftPeer
	if code != 0 || json.Unmarshal([]byte(out), &peers) != nil || len(peers) != 2 || !strings.HasPrefix(peers[0].ID, "m") {
		t.Errorf("list-peers after the restore: exit %d\n%s", code, out)
	}

	// remove-peer: an unknown ID is refused (exit 2, nothing changed); a
	// follower of the old cluster is removed, through another follower.
	out, errOut, code = shoalCLI(t, a, 0, "operator", "raft", "remove-peer", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errOut, "no raft peer \"nosuch\"") {
		t.Errorf("remove-peer nosuch: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	lead := a.Leader()
	victim, via := (lead+1)%3, (lead+2)%3
	out, errOut, code = shoalCLI(t, a, via, "operator", "raft", "remove-peer", a.Name(victim))
	if code != 0 || !strings.Contains(out, "removed "+a.Name(victim)) {
		t.Errorf("remove-peer %s: exit %d\n%s%s", a.Name(victim), code, out, errOut)
	}
}

// A restore from a snapshot taken under a running attempt never starts
// that attempt number again, on any node: the snapshot's attempt 1 is
// failed by the restore, the live cluster's attempt 2 (not in the
// snapshot) is ended, and the job runs on as attempt 3. Each rank
// appends job,attempt,pid to a file: every attempt appears once.
func TestSnapshotRestoreUnderALiveAttemptStartsNoAttemptTwice(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	ctx := context.Background()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	id := submitAPI(t, c, 0, api.JobSpec{NP: 1, MaxAttempts: 3, Workdir: dir,
		Cmd: []string{"sh", "-c", `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs + `; exec sleep 600`}})
	testcluster.WaitFor(t, 60*time.Second, "attempt 1 running", func() bool {
		return jobState(c, 0, id).State == "running" && len(testcluster.AttemptLines(runs, id, 1)) == 1
	})
	first := jobState(c, 0, id).Attempts[0].Head
	file := filepath.Join(dir, "backup.snap")
	if out, errOut, code := shoalCLI(t, c, 0, "operator", "snapshot", "save", file); code != 0 {
		t.Fatalf("snapshot save: exit %d\n%s%s", code, out, errOut)
	}

	// The live cluster goes on: attempt 1 fails over to attempt 2 on another node.
	cmd, err := raftfsm.Encode(raftfsm.CmdFailAttempt, time.Now(), raftfsm.FailAttempt{ID: id, Attempt: 1, Reason: "moved by the test", Retry: true, Lost: []string{first}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Client(0).Apply(ctx, cmd); err != nil || res.Err != "" {
		t.Fatalf("fail attempt 1: %v %s", err, res.Err)
	}
	testcluster.WaitFor(t, 60*time.Second, "attempt 2 running", func() bool {
		j := jobState(c, 0, id)
		return j.State == "running" && j.Attempt == 2 && len(testcluster.AttemptLines(runs, id, 2)) == 1
	})
	// The first head forgets attempt 1 once it ended there, as it does
	// with every ended attempt: a restore must not rely on its memory.
	testcluster.WaitFor(t, 60*time.Second, "the first head's bookkeeping of attempt 1 pruned", func() bool {
		return c.Agent(c.Index(first)).BookkeepingSizes()["launched"] == 0
	})

	if out, errOut, code := shoalCLI(t, c, 0, "operator", "snapshot", "restore", file); code != 0 {
		t.Fatalf("snapshot restore: exit %d\n%s%s", code, out, errOut)
	}
	var j api.Job
	testcluster.WaitFor(t, 90*time.Second, "the job running again under a new attempt", func() bool {
		j = jobState(c, 0, id)
		return j.State == "running" && len(testcluster.AttemptLines(runs, id, j.Attempt)) == 1 && j.Attempt > 2
	}, func() string {
		return fmt.Sprintf("job %s at attempt %d (%s): %+v", j.State, j.Attempt, j.Reason, j.Attempts)
	})
	if j.Attempt != 3 {
		t.Errorf("after the restore the job runs attempt %d, want 3: the next number neither cluster gave out", j.Attempt)
	}
	if r := j.Attempts[0].Reason; !strings.Contains(r, "restored from a snapshot") {
		t.Errorf("attempt 1's reason %q, want the restore named", r)
	}
	for n := 1; n <= j.Attempt; n++ {
		if got := testcluster.AttemptLines(runs, id, n); len(got) != 1 {
			t.Errorf("attempt %d started %d times (%v), want once", n, len(got), got)
		}
	}
	// Attempt 2, which the restored state does not have, ends on its node.
	testcluster.WaitFor(t, 30*time.Second, "attempt 2's process gone", func() bool {
		for _, l := range testcluster.AttemptLines(runs, id, 2) {
			var pid int
			if _, err := fmt.Sscanf(l[strings.LastIndexByte(l, ',')+1:], "%d", &pid); err == nil && alive(pid) {
				return false
			}
		}
		return true
	})
}
