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

// `shoal alloc` on a cluster whose network model is not there yet: the
// agent answers model_wait, alloc shows the count on stderr and asks
// again (with how long it has waited) until the agent places; --model-wait
// 0 asks to place at once.
func TestAllocWaitsForTheNetworkModel(t *testing.T) {
	// Not parallel: urfave/cli sets package-level flags on every run.
	var mu sync.Mutex
	var asked []api.AllocRequest
	token := testcluster.NewToken(t)
	srv := testcluster.FakeAgent(t, token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req api.AllocRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked = append(asked, req)
		n := len(asked)
		mu.Unlock()
		d := api.AllocDecision{Hosts: []api.JobHost{{Node: "n1", Procs: 1}}, ModelCoverage: "10 of 10 nodes measured"}
		if n <= 2 && !req.NoModelWait {
			d = api.AllocDecision{Hosts: []api.JobHost{}, Wait: true, ModelWait: true,
				WaitReason: "waiting for the network model: " + []string{"4", "7"}[n-1] + " of 10 nodes measured"}
		}
		_ = json.NewEncoder(w).Encode(d)
	}))
	env := map[string]string{"SHOAL_ADDR": srv.URL, "SHOAL_TOKEN": token}
	start := time.Now()
	out, errOut, code := shoal(t, env, "alloc", "-n", "1")
	if code != 0 || strings.TrimSpace(out) != "n1:1" {
		t.Fatalf("alloc: exit %d, out %q, err %q", code, out, errOut)
	}
	for _, want := range []string{"waiting for the network model: 4 of 10 nodes measured", "7 of 10", "for the network model (10 of 10 nodes measured)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if len(asked) != 3 || asked[0].ModelWaitedMs != 0 || asked[2].ModelWaitedMs < 1500 || time.Since(start) < 2*modelPoll {
		t.Fatalf("asked %+v in %v, want three asks a poll apart, each saying how long it waited", asked, time.Since(start))
	}
	asked = nil
	if _, errOut, code := shoal(t, env, "alloc", "-n", "1", "--model-wait", "0"); code != 0 || len(asked) != 1 || !asked[0].NoModelWait || strings.Contains(errOut, "waiting") {
		t.Fatalf("--model-wait 0: exit %d, asked %+v, stderr %q: want one ask placing at once", code, asked, errOut)
	}
}

// The pending reason where users look: `shoal jobs` (squeue's (Reason)
// in the hosts column) and `shoal run`'s progress line.
func TestPendingReasonShown(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	j := api.Job{ID: 3, State: "queued", Owner: "alice", SubmittedAt: now, Spec: api.JobSpec{Cmd: []string{"./halo"}, NP: 4},
		WaitReason: "waiting for the network model: 4 of 10 nodes measured"}
	var b strings.Builder
	writeJobs(&b, []api.Job{j}, now)
	if !strings.Contains(b.String(), "(waiting for the network model: 4 of 10 nodes measured)") {
		t.Errorf("jobs:\n%s", b.String())
	}
	if got := progress(j); got != "job 3 queued (waiting for the network model: 4 of 10 nodes measured)" {
		t.Errorf("progress %q", got)
	}
}
