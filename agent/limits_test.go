package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// queuedBody is a job that stays queued: it needs a GPU no test node has.
func queuedBody(marker string, priority int) json.RawMessage {
	b, _ := json.Marshal(api.SubmitRequest{RequestID: marker, Spec: api.JobSpec{
		Cmd: []string{"true", marker}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true, Priority: priority,
		PEs: []api.PENeed{{Kind: "gpu", PerProc: 1}}}})
	return b
}

func replicatedLimits(t *testing.T, c *testcluster.Cluster, i int) raftfsm.Limits {
	t.Helper()
	var st raftfsm.State
	if err := c.Client(i).Do(context.Background(), "GET", "/v1/state", nil, &st); err != nil {
		return raftfsm.Limits{}
	}
	return st.Limits
}

// TestPerUserLimits: one user floods the queue through the sockets of two
// agents at once. The queued-jobs limit holds cluster-wide: exactly the
// limit's worth of jobs is committed and every other submit gets 429
// naming the limit. A priority above the default is an administrator's;
// listings filter by user and state and come in pages.
func TestPerUserLimits(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to submit as uid 65534 (nobody)")
	}
	nobody, err := user.LookupId("65534")
	if err != nil {
		t.Skip("no user 65534 (nobody)")
	}
	binDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	const limit = 3
	c := jobCluster(t, 2, func(_ int, cfg *agent.Config) { cfg.Limits.QueuedJobs = limit })
	for i := range 2 {
		testcluster.WaitFor(t, 15*time.Second, "the leader to replicate the limits", func() bool {
			return replicatedLimits(t, c, i).QueuedJobs == limit
		})
	}
	bin := copyExecutable(t, binDir)
	socks := []string{c.Agent(0).SocketPath(), c.Agent(1).SocketPath()}

	const tries = 8
	answers := make([]sockAns, tries)
	var wg sync.WaitGroup
	for k := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[k] = asUser(t, bin, socks[k%2], 65534, sockReq{Method: "POST", Path: "/v1/jobs", Body: queuedBody(fmt.Sprint("flood-", k), 0)})
		}()
	}
	wg.Wait()
	accepted := 0
	for k, ans := range answers {
		switch {
		case ans.Code == http.StatusOK:
			accepted++
		case ans.Code == http.StatusTooManyRequests && strings.Contains(ans.Msg, "--max-queued-jobs"):
		default:
			t.Errorf("submit %d: %d %q, want 200 or 429 naming --max-queued-jobs", k, ans.Code, ans.Msg)
		}
	}
	ctx := context.Background()
	mine, err := c.Client(1).JobsWhere(ctx, api.JobsQuery{User: nobody.Username, States: []string{"queued"}})
	if err != nil {
		t.Fatal(err)
	}
	if accepted != limit || len(mine) != limit {
		t.Fatalf("%d submits accepted, %d jobs queued for %s; want exactly %d of %d", accepted, len(mine), nobody.Username, limit, tries)
	}

	// Priority: above the default only for administrators.
	ans := asUser(t, bin, socks[0], 65534, sockReq{Method: "POST", Path: "/v1/jobs", Body: queuedBody("jump", 5)})
	if ans.Code != http.StatusForbidden || !strings.Contains(ans.Msg, "priority 5") {
		t.Fatalf("priority 5 from nobody: %d %q, want 403", ans.Code, ans.Msg)
	}
	var req api.SubmitRequest
	_ = json.Unmarshal(queuedBody("admin-jump", 5), &req)
	req.Owner = "root"
	res, err := c.Client(0).Submit(ctx, req)
	if err != nil {
		t.Fatalf("priority 5 from a token holder: %v", err)
	}
	testcluster.WaitFor(t, 10*time.Second, "node 0 to apply the admin's job", func() bool {
		_, err := c.Client(0).Job(ctx, res.ID)
		return err == nil
	})

	// Listings: filters and pages.
	var page []api.Job
	if err := c.Client(0).Do(ctx, "GET", "/v1/jobs?user="+nobody.Username+"&limit=2", nil, &page); err != nil || len(page) != 2 {
		t.Fatalf("a page of 2: %d jobs (%v)", len(page), err)
	}
	for _, q := range []api.JobsQuery{{PageSize: 1}, {PageSize: 2, User: nobody.Username}, {User: "root", States: []string{"queued"}}} {
		js, err := c.Client(0).JobsWhere(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"": limit + 1, nobody.Username: limit, "root": 1}[q.User]
		if len(js) != want {
			t.Errorf("JobsWhere(%+v): %d jobs, want %d", q, len(js), want)
		}
		for i, j := range js {
			if (q.User != "" && j.Owner != q.User) || (i > 0 && j.ID <= js[i-1].ID) {
				t.Errorf("JobsWhere(%+v): job %d of %s out of filter or order", q, j.ID, j.Owner)
			}
		}
	}
	if err := c.Client(0).Do(ctx, "GET", "/v1/jobs?state=sleeping", nil, &page); err == nil {
		t.Error("an unknown state filter was accepted")
	}
}
