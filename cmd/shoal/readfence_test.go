package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestReadsAskForTheirFence: shoal run's first read of its job asks for
// the state the submit was committed at (?min_index= of the submit's
// X-Shoal-Index), so an agent whose copy is behind answers the job rather
// than "no job"; --consistent on shoal job and shoal jobs asks the
// agent to catch up with the leader first.
func TestReadsAskForTheirFence(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	var mu sync.Mutex
	var reads []string
	token := testcluster.NewToken(t)
	zero := 0
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs":
			w.Header().Set(api.IndexHeader, "42")
			_ = json.NewEncoder(w).Encode(api.SubmitResponse{ID: 7})
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/jobs"):
			mu.Lock()
			reads = append(reads, r.URL.RequestURI())
			mu.Unlock()
			w.Header().Set(api.IndexHeader, "43")
			j := api.Job{ID: 7, State: "done", ExitCode: &zero, Owner: "root", SubmittedAt: time.Now(),
				Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1}, Hosts: []api.JobHost{}, Attempts: []api.Attempt{}}
			if r.URL.Path == "/v1/jobs" {
				_ = json.NewEncoder(w).Encode([]api.Job{j})
				return
			}
			_ = json.NewEncoder(w).Encode(j)
		default:
			http.NotFound(w, r) // e.g. the member list the CLI caches for its fallbacks
		}
	}))
	for _, args := range [][]string{
		{"run", "-n", "1", "--mpi", "none", "--", "true"},
		{"job", "7", "--consistent"},
		{"jobs", "--consistent"},
	} {
		var o, e strings.Builder
		argv := append([]string{"shoal", args[0], "--addr", srv.URL, "--token", token}, args[1:]...)
		if rc := run(argv, &o, &e); rc != 0 {
			t.Fatalf("shoal %s: exit %d: %s", strings.Join(args, " "), rc, e.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/v1/jobs/7?min_index=42", "/v1/jobs/7?consistent=1", "/v1/jobs?consistent=1&limit=1000"}
	if strings.Join(reads, " ") != strings.Join(want, " ") {
		t.Fatalf("reads %q, want %q", reads, want)
	}
}
