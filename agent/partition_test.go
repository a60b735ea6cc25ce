package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// The raft leader is cut off from the two other voters, in process, on
// the gossip and raft twins (no root, no namespaces): the cut-off node
// loses its leadership and refuses writes, the two others elect a leader
// and go on writing, and once the link is back the three agree on one
// leader and one state. A job running on the majority all along starts
// its attempt once.
func TestPartition_MinorityCannotWriteMajorityElects(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test; skipped with -short")
	}
	t.Parallel()
	c := jobClusterOn(t, 3, true, func(_ int, cfg *agent.Config) {
		// A write with no leader gives up in 4 s: long enough for a loaded
		// machine's majority to commit, short enough to see the minority's fail.
		cfg.WriteTimeout = 4 * time.Second
	})
	old := c.WaitLeader(30 * time.Second)
	a, b := (old+1)%3, (old+2)%3
	runs := filepath.Join(t.TempDir(), "runs")
	// The job runs on a, in the majority, through the partition and the heal.
	script := `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs + `; sleep 15`
	long := submitAPI(t, c, old, api.JobSpec{Cmd: []string{"sh", "-c", script}, NP: 1, MaxAttempts: 3,
		Hostfile: []api.HostSlots{{Host: c.Name(a), Slots: 1}}})
	waitState(t, c, old, long, 30*time.Second, "running")
	testcluster.WaitFor(t, 20*time.Second, "the job's attempt 1 started", func() bool {
		return len(testcluster.AttemptLines(runs, long, 1)) == 1
	})

	c.Partition([]int{old}, []int{a, b})
	newLeader := func() int {
		for _, i := range []int{a, b} {
			if c.Agent(i).IsLeader() {
				return i
			}
		}
		return -1
	}
	testcluster.WaitFor(t, 30*time.Second, "a leader among the majority", func() bool { return newLeader() >= 0 }, c.Describe)
	testcluster.WaitFor(t, 30*time.Second, "the cut-off node without a leader", func() bool {
		return !c.Agent(old).IsLeader() && c.Agent(old).LeaderName() == ""
	}, c.Describe)

	// A write through the minority fails, saying there is no leader.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, err := c.Client(old).Submit(ctx, api.SubmitRequest{RequestID: "minority", Owner: "root",
		Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none", Workdir: t.TempDir(), MaxAttempts: 1}})
	cancel()
	var se *api.StatusError
	if err == nil || !errors.As(err, &se) || !strings.Contains(strings.ToLower(err.Error()), "leader") {
		t.Fatalf("submit through the cut-off node: %v, want a refusal naming the missing leader", err)
	}
	// The majority writes, and runs the job on its own nodes.
	during := submitAPI(t, c, newLeader(), api.JobSpec{Cmd: []string{"true"}, NP: 1,
		Hostfile: []api.HostSlots{{Host: c.Name(b), Slots: 1}}})
	waitState(t, c, a, during, 30*time.Second, "done")

	c.Heal()
	leader := c.WaitLeader(60 * time.Second)
	want := c.Agent(leader).FSM().Index()
	testcluster.WaitFor(t, 30*time.Second, "every node at the leader's index", func() bool {
		for i := range 3 {
			if c.Agent(i).FSM().Index() < want {
				return false
			}
		}
		return true
	}, c.Describe)
	for i := range 3 {
		if j := jobState(c, i, during); j.State != "done" {
			t.Errorf("%s: job %d written during the partition is %q, want done", c.Name(i), during, j.State)
		}
		for _, j := range c.Agent(i).FSM().State().Jobs {
			if j.RequestID == "minority" {
				t.Errorf("%s holds job %d, the write refused on the minority", c.Name(i), j.ID)
			}
		}
	}
	j := waitState(t, c, leader, long, 60*time.Second, "done", "failed")
	if got := testcluster.AttemptLines(runs, long, 1); len(got) != 1 || j.State != "done" || j.Attempt != 1 {
		t.Fatalf("job %d is %s at attempt %d, its attempt 1 started %d times (%v): want done, attempt 1 started once",
			long, j.State, j.Attempt, len(got), got)
	}
}
