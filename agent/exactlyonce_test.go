package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Fifty clients submit from different nodes while the leader is killed.
// A client whose agent dies retries the same request elsewhere, as the
// CLI's request ID allows, and every client retries once more after all
// fifty committed (the ones sent to the old leader across its death). Every
// job must end done, exactly once per attempt, and the cluster must hold
// exactly fifty jobs.
func TestLeaderKilledDuringFiftySubmissions(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test; skipped with -short")
	}
	t.Parallel()
	// Real transports and boltdb: the leader dies with TLS connections and
	// an open database, as in production.
	c := jobClusterOn(t, 5, false, nil)
	logf := filepath.Join(t.TempDir(), "runs")
	// jobCluster waited for a leader, but leadership may move on a loaded
	// machine: wait again rather than kill node -1.
	leader := c.WaitLeader(30 * time.Second)
	const jobs = 50
	var wg sync.WaitGroup
	ids := make([]uint64, jobs)
	errs := make([]error, jobs)
	killed := make(chan struct{})
	for k := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if k == jobs/5 {
				c.Kill(leader)
				close(killed)
			}
			req := api.SubmitRequest{RequestID: fmt.Sprintf("fifty-%d", k), Owner: "root", Spec: api.JobSpec{
				Cmd: []string{"sh", "-c", `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT" >> ` + logf}, NP: 1, MPI: "none",
				MaxAttempts: 3, Workdir: os.TempDir(), Oversubscribe: true}}
			deadline := time.Now().Add(testcluster.Stretch(60 * time.Second))
			for node := k % 5; time.Now().Before(deadline); node = (node + 1) % 5 {
				if c.Agent(node) == nil {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), testcluster.Stretch(15*time.Second))
				res, err := c.Client(node).Submit(ctx, req)
				cancel()
				if err == nil {
					ids[k], errs[k] = res.ID, nil
					return
				}
				errs[k] = err
			}
		}()
	}
	wg.Wait()
	<-killed
	for k, err := range errs {
		if err != nil {
			t.Fatalf("submission %d never committed: %v", k, err)
		}
	}
	obs := (leader + 1) % 5
	// Every client retries once more through another node, as one whose answer was lost
	// would: the submissions committed before the kill were committed by the old leader, so
	// their retries cross the leader change. Each retry must answer the job its first try
	// committed, and add none.
	for k := range jobs {
		node := (k%5 + 1) % 5
		if node == leader {
			node = obs
		}
		req := api.SubmitRequest{RequestID: fmt.Sprintf("fifty-%d", k), Owner: "root", Spec: api.JobSpec{
			Cmd: []string{"sh", "-c", `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT" >> ` + logf}, NP: 1, MPI: "none",
			MaxAttempts: 3, Workdir: os.TempDir(), Oversubscribe: true}}
		ctx, cancel := context.WithTimeout(context.Background(), testcluster.Stretch(30*time.Second))
		res, err := c.Client(node).Submit(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("retry of submission %d on %s: %v", k, c.Name(node), err)
		}
		if res.ID != ids[k] {
			t.Errorf("retry of submission %d made job %d, the first try made job %d: a committed submit ran twice", k, res.ID, ids[k])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	testcluster.WaitFor(t, 90*time.Second, "all fifty jobs done", func() bool {
		js, err := c.Client(obs).Jobs(context.Background())
		if err != nil {
			return false
		}
		done := 0
		for _, j := range js {
			if j.State == "done" {
				done++
			}
		}
		return done == jobs
	}, func() string {
		js, _ := c.Client(obs).Jobs(context.Background())
		var s []string
		for _, j := range js {
			if j.State != "done" {
				s = append(s, fmt.Sprintf("%d:%s(%s)", j.ID, j.State, j.Reason))
			}
		}
		return strings.Join(s, " ")
	})
	js, _ := c.Client(obs).Jobs(context.Background())
	if len(js) != jobs {
		t.Fatalf("%d jobs in the cluster, want exactly %d: a retried submission was duplicated", len(js), jobs)
	}
	b, _ := os.ReadFile(logf)
	seen := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		seen[l]++
	}
	for _, j := range js {
		final := fmt.Sprintf("%d,%d", j.ID, j.Attempt)
		if seen[final] != 1 {
			t.Errorf("job %d's final attempt %d ran %d times", j.ID, j.Attempt, seen[final])
		}
	}
	for l, n := range seen {
		if n > 1 {
			t.Errorf("attempt %s ran %d times: two live copies of one attempt", l, n)
		}
	}
}
