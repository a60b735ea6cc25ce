package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestJobsFollowsPages: `shoal jobs --user --state` passes the filters to
// the agent and follows its pages to the end; --json keeps the array of
// jobs it always printed.
func TestJobsFollowsPages(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	var mu sync.Mutex
	var queries []string
	token := testcluster.NewToken(t)
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/jobs" {
			http.NotFound(w, r) // e.g. the member list the CLI caches for its fallbacks
			return
		}
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		q := r.URL.Query()
		after, _ := strconv.Atoi(q.Get("after"))
		var page []api.Job
		for id := after + 1; id <= 5 && len(page) < 2; id++ { // pages of 2 whatever was asked
			page = append(page, api.Job{ID: uint64(id), State: q.Get("state"), Owner: q.Get("user"), SubmittedAt: time.Now(),
				Spec: api.JobSpec{Cmd: []string{"x"}, NP: 1}, Hosts: []api.JobHost{}})
		}
		if after+len(page) < 5 {
			w.Header().Set(api.NextAfterHeader, strconv.Itoa(after+len(page)))
		}
		_ = json.NewEncoder(w).Encode(page)
	}))
	var o, e strings.Builder
	if rc := run([]string{"shoal", "jobs", "--addr", srv.URL, "--token", token, "--json", "--user", "alice", "--state", "queued,running"}, &o, &e); rc != 0 {
		t.Fatalf("exit %d: %s", rc, e.String())
	}
	var js []api.Job
	if err := json.Unmarshal([]byte(o.String()), &js); err != nil || len(js) != 5 {
		t.Fatalf("--json: %d jobs (%v), want all 5 across 3 pages:\n%s", len(js), err, o.String())
	}
	if js[0].Owner != "alice" || js[0].State != "queued,running" {
		t.Errorf("filters not passed: %+v", js[0])
	}
	if len(queries) != 3 || !strings.Contains(queries[2], "after=4") {
		t.Errorf("pages asked: %q, want 3 following after=", queries)
	}
}
