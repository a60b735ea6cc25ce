package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestJobsWatchWaitsOnTheIndex: `shoal jobs --watch` lists the jobs, then
// asks the agent to wait past the index it read before listing, and lists
// them again when the answer comes; an agent's refusal ends it. The agent
// is a stand-in that scripts the indexes.
func TestJobsWatchWaitsOnTheIndex(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	var mu sync.Mutex
	var waits []string
	token := testcluster.NewToken(t)
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/v1/jobs" {
			http.NotFound(w, r)
			return
		}
		if q.Get("limit") != "1" { // the listing itself
			j := filled[api.Job]()
			j.State = "running"
			_ = json.NewEncoder(w).Encode([]api.Job{j})
			return
		}
		mu.Lock()
		waits = append(waits, q.Get("index"))
		n := len(waits)
		mu.Unlock()
		if n > 3 {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(api.Error{Error: "no more"})
			return
		}
		// 3, then 7 twice: the third wait ended without a change.
		w.Header().Set(api.IndexHeader, []string{"3", "7", "7"}[n-1])
		_ = json.NewEncoder(w).Encode([]api.Job{})
	}))
	out, errOut, code := shoal(t, map[string]string{"SHOAL_ADDR": srv.URL, "SHOAL_TOKEN": token}, "jobs", "--watch")
	if code == 0 || !strings.Contains(errOut, "no more") {
		t.Fatalf("jobs --watch: exit %d, stderr %q: want the refusal to end it", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(waits, ","); got != ",3,7,7" {
		t.Fatalf("waits past %q, want \",3,7,7\": each wait past the index of the one before", got)
	}
	if n := strings.Count(out, "state index"); n != 2 {
		t.Fatalf("%d listings, want 2 (at 3 and 7; none when a wait ends unchanged):\n%s", n, out)
	}
}

// TestLogsFollowWaitsForTheStart: `shoal logs -f` on a job not started
// waits on the agent's index for its start, then streams the output.
func TestLogsFollowWaitsForTheStart(t *testing.T) {
	var mu sync.Mutex
	var reads []string
	token := testcluster.NewToken(t)
	started := time.Unix(1_800_000_000, 0).UTC()
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/jobs/4":
			mu.Lock()
			reads = append(reads, r.URL.Query().Get("index"))
			n := len(reads)
			mu.Unlock()
			j := api.Job{ID: 4, State: "queued", Owner: "u"}
			index := "10"
			if n >= 3 {
				j.State, j.Attempt = "running", 1
				j.Attempts = []api.Attempt{{N: 1, State: "running", StartedAt: &started}}
				index = "12"
			}
			w.Header().Set(api.IndexHeader, index)
			_ = json.NewEncoder(w).Encode(j)
		case "/v1/jobs/4/logs":
			if r.URL.Query().Get("stream") == "stdout" {
				fmt.Fprint(w, "output\n")
			}
		default:
			http.NotFound(w, r)
		}
	}))
	out, errOut, code := shoal(t, map[string]string{"SHOAL_ADDR": srv.URL, "SHOAL_TOKEN": token}, "logs", "-f", "4")
	if code != 0 || out != "output\n" {
		t.Fatalf("logs -f: exit %d, out %q, err %q", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first read (the command's own), then reads that wait past the last answer's index.
	if got := strings.Join(reads, ","); got != ",,10" {
		t.Fatalf("reads with index %q, want \",,10\"", got)
	}
}
