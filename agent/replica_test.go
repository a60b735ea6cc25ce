package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// A client's copy of the state, streamed from the agents' GET
// /v1/replicate: it mirrors a submitted job's attempt, keeps following
// when its server dies, and the route wants an agent's credentials.
func TestReplicaFollowsTheCluster(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 3, nil)
	lead := c.WaitLeader(60 * time.Second)
	names := []string{c.Name(0), c.Name(1), c.Name(2)}
	base := func(name string) (string, error) {
		a := c.Agent(c.Index(name))
		if a == nil {
			return "", fmt.Errorf("%s is down", name)
		}
		return a.HTTPAddr(), nil
	}
	// A certificate of the cluster's CA, as a client agent's node certificate.
	agentHTTP := &http.Client{Transport: &http.Transport{TLSClientConfig: testcluster.CertTLS(c.Token())}}
	t.Cleanup(agentHTTP.CloseIdleConnections)

	// Without a certificate or the token the stream is refused.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: testcluster.ClientTLS(c.Token())}}
	if _, err := replica.OpenHTTP(anon, base)(t.Context(), names[0], 0); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("stream without credentials: %v, want 401", err)
	}

	// Follow a server that is not the leader, to kill it later without an election.
	first := (lead + 1) % 3
	copy := raftfsm.New()
	wake := make(chan struct{}, 1)
	f, err := replica.Start(context.Background(), replica.Config{FSM: copy, Wake: []chan struct{}{wake},
		Servers: func() []string { return names }, Open: replica.OpenHTTP(agentHTTP, base),
		Pick: func(int) int { return first }, MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	select {
	case <-f.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the follower never caught up with the cluster")
	}

	mirrored := func(id uint64) func() bool {
		return func() bool {
			type seen struct {
				ok      bool
				attempt int
				state   raftfsm.JobState
			}
			look := func(f *raftfsm.FSM) (v seen) {
				f.View(func(s *raftfsm.State) {
					if j := s.Jobs[id]; j != nil {
						v = seen{true, j.Attempt, j.State}
					}
				})
				return v
			}
			want, got := look(c.Agent(lead).FSM()), look(copy)
			return want.ok && want.attempt >= 1 && got == want
		}
	}
	submit := func(req string) uint64 {
		res, err := c.Client(lead).Submit(t.Context(), api.SubmitRequest{RequestID: req, Owner: "root",
			Spec: api.JobSpec{Cmd: []string{"sleep", "60"}, NP: 1, MPI: "none", Workdir: os.TempDir(), Oversubscribe: true, MaxAttempts: 1}})
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		return res.ID
	}
	start := time.Now()
	id := submit("replica-1")
	testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("job %d's attempt in the copy", id), mirrored(id),
		func() string {
			j, _ := c.Client(lead).Job(t.Context(), id)
			return fmt.Sprintf("copy at %d following %q (stats %+v); leader at %d, job %s attempt %d", copy.Index(), f.Server(), f.Stats(), c.Agent(lead).FSM().Index(), j.State, j.Attempt)
		})
	t.Logf("job %d's attempt reached the copy %v after the submit", id, time.Since(start).Round(time.Millisecond))
	if st := f.Stats(); st.Entries == 0 {
		t.Fatalf("the job reached the copy without an entry pushed (%+v)", st)
	}
	if f.Server() != names[first] {
		t.Fatalf("following %q, want %s", f.Server(), names[first])
	}
	select {
	case <-wake:
	default:
		t.Fatal("the copy changed without a wake signal")
	}
	// The copy is the server's state, byte for byte, whenever both stand
	// at the same index.
	server := c.Agent(first).FSM()
	testcluster.WaitFor(t, 30*time.Second, "the copy to equal its server", func() bool {
		a, _ := server.Bytes()
		b, _ := copy.Bytes()
		return string(a) == string(b)
	})

	c.Kill(first)
	id2 := submit("replica-2")
	testcluster.WaitFor(t, 60*time.Second, fmt.Sprintf("job %d in the copy after its server died", id2), mirrored(id2),
		func() string { return fmt.Sprintf("copy at %d following %q", copy.Index(), f.Server()) })
	if s := f.Server(); s == names[first] || s == "" {
		t.Fatalf("following %q after %s died", s, names[first])
	}

	// An operator restores a backup taken before job 3: the copy goes back
	// with the cluster (the restored state may stand below the copy's index).
	backup, err := c.Client(lead).SnapshotSave(t.Context())
	if err != nil {
		t.Fatalf("snapshot save: %v", err)
	}
	id3 := submit("replica-3")
	testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("job %d in the copy", id3), mirrored(id3))
	// Under load the leader may change during the restore ("leadership
	// lost while committing": outcome unknown); restoring again is harmless.
	var restoreErr error
	testcluster.WaitFor(t, 60*time.Second, "the backup restored", func() bool {
		_, restoreErr = c.Client(lead).SnapshotRestore(t.Context(), backup)
		return restoreErr == nil
	}, func() string { return fmt.Sprint(restoreErr) })
	has3 := func(f *raftfsm.FSM) (ok bool) {
		f.View(func(s *raftfsm.State) { ok = s.Jobs[id3] != nil })
		return ok
	}
	testcluster.WaitFor(t, 30*time.Second, "the copy to drop the job the backup predates", func() bool {
		return !has3(c.Agent(lead).FSM()) && !has3(copy)
	}, func() string { return fmt.Sprintf("copy at %d (stats %+v)", copy.Index(), f.Stats()) })
}
