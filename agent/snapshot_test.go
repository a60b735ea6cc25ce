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
			cfg.CoallocTimeout = 6 * time.Second
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
	// Right after the restore it still shows the backup's attempt on n0
	// (running, as saved) until the new leader fails it: wait for an
	// attempt on a node of the new cluster.
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
