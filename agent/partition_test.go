package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// The raft leader is cut off from the two other voters, in process, on
// the gossip and raft twins (no root, no namespaces): the cut-off node
// loses its leadership and refuses writes, the two others elect a leader
// and go on writing, and once the link is back the three agree on one
// leader and one state. No attempt starts twice: a job running on the
// majority all along starts its attempt once, and a job with a rank on
// the cut-off node loses that attempt and runs the next on the majority,
// each rank once.
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
	leader := c.WaitLeader(30 * time.Second)

	// Two ranks on two of the three nodes; attempt 1 runs until it is
	// ended, later ones end at once.
	spanRuns := filepath.Join(t.TempDir(), "span")
	spanScript := `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$SHOAL_RANK" >> ` + spanRuns + `; [ "$SHOAL_ATTEMPT" = 1 ] && sleep 300; exit 0`
	span := submitAPI(t, c, leader, api.JobSpec{Cmd: []string{"sh", "-c", spanScript}, NP: 2, PPN: 1, MaxAttempts: 3})
	j := waitState(t, c, leader, span, 30*time.Second, "running")
	var hosts []int
	for _, h := range j.Hosts {
		hosts = append(hosts, c.Index(h.Node))
	}
	// The node to cut off is the leader and holds a rank of the job: the
	// leader itself when placement gave it one, else a host made leader.
	old := leader
	if !slices.Contains(hosts, leader) {
		old = hosts[0]
		f := c.Agent(leader).Raft().LeadershipTransferToServer(raft.ServerID(c.Name(old)),
			raft.ServerAddress(fmt.Sprintf("127.0.0.1:%d", c.Agent(old).RaftPort())))
		if err := f.Error(); err != nil {
			t.Fatalf("leadership transfer to %s: %v", c.Name(old), err)
		}
		testcluster.WaitFor(t, 30*time.Second, c.Name(old)+" the agreed leader", func() bool { return c.Leader() == old }, c.Describe)
	}
	a, b := (old+1)%3, (old+2)%3
	t.Logf("job %d on %s; cutting off %s, the leader (was %s)", span, hostsOf(j.Attempts[0]), c.Name(old), c.Name(leader))

	// A job that runs on a, in the majority, through the partition and the heal.
	runs := filepath.Join(t.TempDir(), "runs")
	script := `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT,$$" >> ` + runs + `; sleep 15`
	long := submitAPI(t, c, old, api.JobSpec{Cmd: []string{"sh", "-c", script}, NP: 1, MaxAttempts: 3,
		Hostfile: []api.HostSlots{{Host: c.Name(a), Slots: 1}}})
	waitState(t, c, old, long, 30*time.Second, "running")
	testcluster.WaitFor(t, 20*time.Second, "both jobs' attempt 1 started on every rank", func() bool {
		return len(testcluster.AttemptLines(runs, long, 1)) == 1 && len(testcluster.AttemptLines(spanRuns, span, 1)) == 2
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
	// The majority declares the cut-off node dead, fails the attempt that
	// has a rank there and runs the next one on its own two nodes.
	j = waitState(t, c, a, span, 60*time.Second, "done", "failed")
	if j.State != "done" || j.Attempt < 2 || strings.Contains(hostsOf(j.Attempts[j.Attempt-1]), c.Name(old)) {
		t.Fatalf("spanning job %d during the partition: %s at attempt %d: %+v", span, j.State, j.Attempt, j.Attempts)
	}

	c.Heal()
	leader = c.WaitLeader(60 * time.Second)
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
	j = waitState(t, c, leader, long, 60*time.Second, "done", "failed")
	if got := testcluster.AttemptLines(runs, long, 1); len(got) != 1 || j.State != "done" || j.Attempt != 1 {
		t.Fatalf("job %d is %s at attempt %d, its attempt 1 started %d times (%v): want done, attempt 1 started once",
			long, j.State, j.Attempt, len(got), got)
	}
	// A loaded machine may fail an attempt for an outside reason and run
	// another: what matters is that no attempt starts a rank twice, and
	// that the first and the last started both.
	j = jobState(c, leader, span)
	for n := 1; n <= j.Attempt; n++ {
		got := testcluster.AttemptLines(spanRuns, span, n)
		if ran := n == 1 || n == j.Attempt; len(got) > 2 || ran && len(got) != 2 {
			t.Errorf("spanning job %d: attempt %d started %d ranks (%v), want 2, each once", span, n, len(got), got)
		}
	}
}
