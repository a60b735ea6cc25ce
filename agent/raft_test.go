package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

func submitCmd(t *testing.T, req string) []byte {
	t.Helper()
	b, err := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Unix(1700000000, 0), raftfsm.SubmitJob{
		RequestID: req, Owner: "alice", Spec: raftfsm.JobSpec{Cmd: []string{"/bin/true"}, NP: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func roles(t *testing.T, c *testcluster.Cluster, i int) map[string]string {
	ms, err := c.Client(i).Members(context.Background())
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, m := range ms {
		out[m.Name] = m.Role
	}
	return out
}

func count(m map[string]string, role string) int {
	n := 0
	for _, r := range m {
		if r == role {
			n++
		}
	}
	return n
}

func jobsOn(c *testcluster.Cluster, i int) int {
	a := c.Agent(i)
	if a == nil {
		return -1
	}
	return len(a.FSM().State().Jobs)
}

func TestFiveAgentsThreeVotersFailover(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 5, testcluster.Options{Twins: true, BootstrapExpect: 3})
	c.WaitLeader(45 * time.Second)
	testcluster.WaitFor(t, 20*time.Second, "1 leader, 2 voters, 2 non-voters", func() bool {
		r := roles(t, c, 0)
		return count(r, "leader") == 1 && count(r, "voter") == 2 && count(r, "nonvoter") == 2
	}, func() string { return fmt.Sprint(roles(t, c, 0)) })

	// Writes through every node, then kill the leader while writes go on.
	ctx := context.Background()
	committed := map[string]bool{}
	var mu sync.Mutex
	write := func(node int, req string) error {
		res, err := c.Client(node).Apply(ctx, submitCmd(t, req))
		if err == nil && res.Err == "" {
			mu.Lock()
			committed[req] = true
			mu.Unlock()
			return nil
		}
		if err == nil {
			err = fmt.Errorf("%s", res.Err)
		}
		return err
	}
	for i := range 5 {
		if err := write(i, fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatalf("write through %s: %v", c.Name(i), err)
		}
	}
	old := c.WaitLeader(30 * time.Second) // c.Leader() is -1 while leadership moves
	c.Kill(old)
	for _, i := range c.Up() {
		// Each write waits for the new leader (WriteTimeout) and must succeed.
		if err := write(i, fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatalf("write through %s after the leader died: %v (%s)", c.Name(i), err, c.Describe())
		}
	}
	leader := c.WaitLeader(30 * time.Second)
	if leader == old {
		t.Fatal("the dead leader is still leader")
	}
	testcluster.WaitFor(t, 10*time.Second, "every committed write on every live node", func() bool {
		for _, i := range c.Up() {
			if jobsOn(c, i) != len(committed) {
				return false
			}
		}
		return true
	})
	// The dead voter is replaced: 3 voters again, among the 4 live nodes.
	testcluster.WaitFor(t, 20*time.Second, "the dead voter replaced by a promoted non-voter", func() bool {
		r := roles(t, c, leader)
		_, stillThere := r[c.Name(old)]
		return count(r, "leader")+count(r, "voter") == 3 && r[c.Name(old)] != "voter" && r[c.Name(old)] != "leader" && (!stillThere || r[c.Name(old)] == "none")
	}, func() string { return fmt.Sprint(roles(t, c, leader)) })
}

func TestTwoVotersDieOneAfterTheOther(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 5, testcluster.Options{Twins: true, BootstrapExpect: 3})
	c.WaitLeader(45 * time.Second)
	voters := func() []int {
		var out []int
		r := roles(t, c, c.Up()[0])
		for _, i := range c.Up() {
			if r[c.Name(i)] == "voter" {
				out = append(out, i)
			}
		}
		return out
	}
	testcluster.WaitFor(t, 20*time.Second, "two followers that vote", func() bool { return len(voters()) == 2 })
	for round := range 2 {
		v := voters()[0]
		c.Kill(v)
		testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("round %d: 3 voters again without %s", round, c.Name(v)), func() bool {
			l := c.Leader()
			if l < 0 {
				return false
			}
			r := roles(t, c, l)
			return count(r, "leader")+count(r, "voter") == 3 && r[c.Name(v)] != "voter"
		}, c.Describe)
	}
	// Two of the original three voters are gone, yet writes commit.
	up := c.Up()
	res, err := c.Client(up[len(up)-1]).Apply(context.Background(), submitCmd(t, "after-two-deaths"))
	if err != nil || res.Err != "" {
		t.Fatalf("write after two voters died: %v %s (%s)", err, res.Err, c.Describe())
	}
}

func TestRestartEveryAgentRecoversState(t *testing.T) {
	t.Parallel()
	// Real transports and boltdb: what comes back is what raft wrote to
	// disk, not what a twin kept in memory.
	c := testcluster.New(t, 3, testcluster.Options{})
	c.WaitLeader(45 * time.Second)
	for i := range 10 {
		if res, err := c.Client(i%3).Apply(context.Background(), submitCmd(t, fmt.Sprint("r", i))); err != nil || res.Err != "" {
			t.Fatalf("write %d: %v %s", i, err, res.Err)
		}
	}
	// Snapshot every node, then write more: recovery must combine a
	// snapshot with the log entries after it.
	for i := range 3 {
		if err := c.Agent(i).Raft().Snapshot().Error(); err != nil {
			t.Fatalf("snapshot on %s: %v", c.Name(i), err)
		}
	}
	for i := 10; i < 12; i++ {
		if res, err := c.Client(i%3).Apply(context.Background(), submitCmd(t, fmt.Sprint("r", i))); err != nil || res.Err != "" {
			t.Fatalf("write %d: %v %s", i, err, res.Err)
		}
	}
	c.StopAll(true)
	for i := range 3 {
		c.Restart(i)
	}
	c.WaitLeader(30 * time.Second)
	testcluster.WaitFor(t, 15*time.Second, "all 12 jobs back on every node from disk", func() bool {
		for i := range 3 {
			if jobsOn(c, i) != 12 {
				return false
			}
		}
		return true
	})
	// The same request ID is still deduplicated after the restart.
	res, err := c.Client(1).Apply(context.Background(), submitCmd(t, "r3"))
	if err != nil || res.JobID != 4 {
		t.Fatalf("re-submitting r3 gave job %d (%v), want the original job 4", res.JobID, err)
	}
}

func TestSingleNodeCluster(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 1, testcluster.Options{Twins: true, BootstrapExpect: 1})
	c.WaitLeader(30 * time.Second)
	res, err := c.Client(0).Apply(context.Background(), submitCmd(t, "solo"))
	if err != nil || res.JobID != 1 {
		t.Fatalf("write on a single node: %+v %v", res, err)
	}
	l, err := c.Client(0).Leader(context.Background())
	if err != nil || l.Name != "n0" {
		t.Fatalf("leader = %+v, %v", l, err)
	}
}

func TestWriteWithoutQuorumFailsClearly(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 3, testcluster.Options{Twins: true, Configure: func(_ int, cfg *agent.Config) { cfg.WriteTimeout = 5 * time.Second }})
	c.WaitLeader(45 * time.Second)
	c.Kill(0)
	c.Kill(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := jobsOn(c, 2)
	_, err := c.Client(2).Apply(ctx, submitCmd(t, "no-quorum"))
	if err == nil {
		t.Fatal("a write committed without a quorum")
	}
	var se *api.StatusError
	if !asStatus(err, &se) || se.Code != 503 {
		t.Fatalf("err = %v, want a 503 naming the missing leader", err)
	}
	if jobsOn(c, 2) != before {
		t.Fatal("a failed write changed the state")
	}
}
