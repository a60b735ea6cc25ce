package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestOneUserCannotBloatTheStateWithFinishedJobs: a local user (uid 65534) submits arrays of
// 100 tasks with a 60 KiB environment over the socket and kills each at once, five times: 500
// killed jobs, which the queued-jobs limit never saw. The cluster keeps the user's newest
// finished jobs up to --max-finished-jobs, the state shares each array's spec, and a listing
// page stays under its byte bound while the client's paging still returns every job.
func TestOneUserCannotBloatTheStateWithFinishedJobs(t *testing.T) {
	t.Parallel()
	nobody := needNobody(t)
	binDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	c := jobCluster(t, 1, nil)
	limits := raftfsm.DefaultLimits()
	testcluster.WaitFor(t, 15*time.Second, "the leader to replicate the limits", func() bool {
		return replicatedLimits(t, c, 0) == limits
	})
	bin := copyExecutable(t, binDir)
	sock := c.Agent(0).SocketPath()

	var env []string
	for i := range 15 {
		env = append(env, fmt.Sprintf("PAD%d=%s", i, strings.Repeat("x", 4000)))
	}
	tasks := make([]int, limits.QueuedJobs)
	for i := range tasks {
		tasks[i] = i
	}
	const rounds = 5
	for round := range rounds {
		body, _ := json.Marshal(api.SubmitRequest{RequestID: fmt.Sprint("bloat-", round), Spec: api.JobSpec{
			Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: "/", Oversubscribe: true, Env: env,
			PEs: []api.PENeed{{Kind: "gpu", PerProc: 1}}, Array: &api.ArraySpec{Tasks: tasks}}})
		ans := asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: "/v1/jobs", Body: body})
		if ans.Code != http.StatusOK {
			t.Fatalf("round %d: submit an array of %d tasks as nobody: %d %s", round, len(tasks), ans.Code, ans.Msg)
		}
		var res api.SubmitResponse
		if err := json.Unmarshal(ans.Body, &res); err != nil {
			t.Fatal(err)
		}
		ans = asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: fmt.Sprintf("/v1/jobs/%d/kill", res.ID), Body: json.RawMessage(`{"array":true}`)})
		if ans.Code != http.StatusOK {
			t.Fatalf("round %d: kill array %d as nobody: %d %s", round, res.ID, ans.Code, ans.Msg)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), testcluster.Stretch(30*time.Second))
	defer cancel()
	mine, err := c.Client(0).JobsWhere(ctx, api.JobsQuery{User: nobody.Username})
	if err != nil {
		t.Fatal(err)
	}
	var st json.RawMessage
	if err := c.Client(0).Do(ctx, "GET", "/v1/state", nil, &st); err != nil {
		t.Fatal(err)
	}
	page, next := rawJobsPage(t, c, "/v1/jobs?limit=1000")
	t.Logf("after %d killed jobs of %s: %d kept, state %d bytes, first page of limit=1000 %d bytes (next after %q)",
		rounds*len(tasks), nobody.Username, len(mine), len(st), len(page), next)
	if len(mine) != limits.FinishedJobs || mine[len(mine)-1].ID != mine[0].ID+uint64(limits.FinishedJobs-1) {
		t.Fatalf("%s keeps %d jobs (IDs %d to %d), want their newest %d finished ones", nobody.Username, len(mine), mine[0].ID, mine[len(mine)-1].ID, limits.FinishedJobs)
	}
	if len(st) > 1<<20 {
		t.Fatalf("the replicated state is %d bytes, want under 1 MiB (two arrays' specs and %d small records)", len(st), limits.FinishedJobs)
	}
	if len(page) > api.JobsPageMaxBytes || next == "" {
		t.Fatalf("one page of ?limit=1000 is %d bytes (next after %q), want at most %d and a next page", len(page), next, api.JobsPageMaxBytes)
	}
}

// rawJobsPage GETs a page of the job listing as the administrator and returns its bytes and
// its next-page header.
func rawJobsPage(t *testing.T, c *testcluster.Cluster, path string) ([]byte, string) {
	t.Helper()
	cl := c.Client(0)
	req, err := http.NewRequest(http.MethodGet, cl.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cl.Token)
	}
	resp, err := cl.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return b, resp.Header.Get(api.NextAfterHeader)
}
