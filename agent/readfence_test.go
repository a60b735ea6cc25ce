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
// plain read and through a read at the submit's index. A client agent,
// whose copy follows a server's (perhaps the one cut off), answers the
// job at once. An ID that does not exist is a 404 soon after, on both:
// the fence costs one read index, not the bound.
func TestReadFence_BehindServerAnswersTheNewJob(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test; skipped with -short")
	}
	t.Parallel()
	// The fence waits two thirds of it; a busy machine catches up slower.
	requestTimeout := testcluster.Stretch(15 * time.Second)
	c := jobClusterOn(t, 4, true, func(_ int, cfg *agent.Config) {
		// The cut-off voter stays in raft's configuration: it comes back
		// as the follower it was, behind by the entries it missed.
		cfg.DeadVoterGrace = 10 * time.Minute
		cfg.HTTP.RequestTimeout = requestTimeout
		cfg.Servers = 3 // the fourth agent is a client
	})
	leader := c.WaitLeader(30 * time.Second)
	client := 3
	if leader == client || c.Agent(client).IsServer() {
		t.Fatalf("%s is a server, want the three bootstrap agents servers and it a client", c.Name(client))
	}
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

	// The client's copy follows a server's, perhaps the one cut off: it
	// finds the job, at the leader's read index, and an ID no agent has is
	// a 404. (Asked at once: once gossip declares the cut-off server dead,
	// the leader asks the client to become a server in its place.)
	if j, err := c.Client(client).Job(ctx, res.ID); err != nil || j.ID != res.ID {
		t.Fatalf("job %d through client %s at once: %d, %v; want the job", res.ID, c.Name(client), j.ID, err)
	}
	missing := res.ID + 1000
	notFound(t, c, client, missing, requestTimeout)
	if c.Agent(client).IsServer() {
		t.Logf("%s became a server while it was read: the reads may have been a server's", c.Name(client))
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

	notFound(t, c, x, missing, requestTimeout)
	testcluster.WaitFor(t, 30*time.Second, "the job written while cut off done everywhere", func() bool {
		return jobState(c, x, res.ID).State == "done"
	})
}

// notFound checks that job id, which no agent has, is a 404 through agent
// i well inside the fence's bound (two thirds of requestTimeout): the
// fence costs one read index, not the bound.
func notFound(t *testing.T, c *testcluster.Cluster, i int, id uint64, requestTimeout time.Duration) {
	t.Helper()
	start := time.Now()
	_, err := c.Client(i).Job(context.Background(), id)
	took := time.Since(start)
	var se *api.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Fatalf("job %d, which no agent has, through %s: %v, want 404", id, c.Name(i), err)
	}
	if bound := requestTimeout * 2 / 3; took >= bound/2 {
		t.Errorf("job %d's 404 through %s took %v, near the fence's bound of %v: want one read index", id, c.Name(i), took, bound)
	}
}
