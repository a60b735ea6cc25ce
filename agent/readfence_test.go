package agent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// A server held behind the leader (cut off from gossip and raft while a
// job is submitted through the leader, its API still answering) never
// says "no job N" for that job: cut off, it answers 503 (it cannot catch
// up to tell), and once the link is back it answers the job, through a
// plain read and through a read at the submit's index. An ID that does
// not exist is a 404 soon after: the fence costs one read index, not the
// bound.
func TestReadFence_BehindServerAnswersTheNewJob(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test; skipped with -short")
	}
	t.Parallel()
	const requestTimeout = 15 * time.Second // the fence waits two thirds of it
	c := jobClusterOn(t, 3, true, func(_ int, cfg *agent.Config) {
		// The cut-off voter stays in raft's configuration: it comes back
		// as the follower it was, behind by the entries it missed.
		cfg.DeadVoterGrace = 10 * time.Minute
		cfg.HTTP.RequestTimeout = requestTimeout
	})
	leader := c.WaitLeader(30 * time.Second)
	x := (leader + 1) % 3
	spec := api.JobSpec{Cmd: []string{"true"}, NP: 1, Hostfile: []api.HostSlots{{Host: c.Name(leader), Slots: 1}}}
	first := submitAPI(t, c, leader, spec)
	waitState(t, c, x, first, 30*time.Second, "queued", "launching", "running", "done")

	c.Disconnect(x)
	ctx := context.Background()
	res, err := c.Client(leader).Submit(ctx, api.SubmitRequest{RequestID: t.Name() + "-behind", Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: t.TempDir(), MaxAttempts: 1,
			Hostfile: []api.HostSlots{{Host: c.Name(leader), Slots: 1}}}})
	if err != nil {
		t.Fatalf("submit through the leader with %s cut off: %v", c.Name(x), err)
	}
	if res.Index == 0 {
		t.Errorf("the submit of job %d answered no %s", res.ID, api.IndexHeader)
	}
	if got := c.Agent(x).FSM().State().Jobs[res.ID]; got != nil {
		t.Fatalf("%s, cut off, already holds job %d: the test holds nothing behind", c.Name(x), res.ID)
	}

	// Cut off, it cannot tell: 503 (which sends the CLI elsewhere), not 404.
	_, err = c.Client(x).Job(ctx, res.ID)
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusServiceUnavailable || !strings.Contains(se.Msg, "cannot tell whether job") {
		t.Fatalf("job %d through %s, cut off and behind: %v, want a 503 saying it cannot tell", res.ID, c.Name(x), err)
	}

	// A read on its way while the link comes back answers the job.
	type answer struct {
		j   api.Job
		err error
	}
	during := make(chan answer, 1)
	go func() {
		j, err := c.Client(x).Job(ctx, res.ID)
		during <- answer{j, err}
	}()
	c.Heal()
	if a := <-during; a.err != nil || a.j.ID != res.ID {
		t.Fatalf("job %d through %s as the link came back: %+v, %v; want the job", res.ID, c.Name(x), a.j.ID, a.err)
	}
	if j, idx, err := c.Client(x).JobAt(ctx, res.ID, res.Index); err != nil || j.ID != res.ID || idx < res.Index {
		t.Fatalf("job %d through %s at the submit's index %d: job %d at %d, %v", res.ID, c.Name(x), res.Index, j.ID, idx, err)
	}

	// A job that does not exist is a 404, at once after the fence.
	missing := res.ID + 1000
	start := time.Now()
	_, err = c.Client(x).Job(ctx, missing)
	took := time.Since(start)
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Fatalf("job %d, which no agent has, through %s: %v, want 404", missing, c.Name(x), err)
	}
	if bound := requestTimeout * 2 / 3; took >= bound/2 {
		t.Errorf("job %d's 404 took %v, near the fence's bound of %v: want one read index", missing, took, bound)
	}
	testcluster.WaitFor(t, 30*time.Second, "the job written while cut off done everywhere", func() bool {
		return jobState(c, x, res.ID).State == "done"
	})
}
