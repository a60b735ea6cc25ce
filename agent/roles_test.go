package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// census counts the alive members by role as node i's `shoal members`
// tells them.
type census = testcluster.Census

func countRoles(c *testcluster.Cluster, i int) (census, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ms, err := c.Client(i).Members(ctx)
	if err != nil {
		return census{}, err
	}
	return testcluster.CountRoles(ms), nil
}

// waitServers waits until node i sees, among the alive members, one
// leader, two more voters, two non-voters and every other alive agent a
// client: the server set healed to its target.
func waitServers(t *testing.T, c *testcluster.Cluster, i, alive int, d time.Duration) census {
	t.Helper()
	var got census
	var err error
	testcluster.WaitFor(t, d, fmt.Sprintf("3 voters, 2 non-voters and %d clients seen from %s", alive-5, c.Name(i)), func() bool {
		got, err = countRoles(c, i)
		return err == nil && len(got.Leader) == 1 && len(got.Voters) == 2 && len(got.Nonvoters) == 2 && len(got.Clients) == alive-5
	}, func() string { return fmt.Sprintf("%v (err %v)", got, err) })
	return got
}

// TestTwentyAgentsServersAndClients: twenty agents on loopback form, with
// nothing configured, a raft of 5 servers (3 voters, 2 warm-standby
// non-voters) and 15 clients; a job submitted on a client runs on
// clients; killing the leader, then two more voters one by one, keeps a
// quorum by promotion: after each kill a write through a client commits
// and the server set heals back to 3 + 2 from the clients.
func TestTwentyAgentsServersAndClients(t *testing.T) {
	if testing.Short() || os.Getenv("SHOAL_E2E") == "" && os.Getenv("SHOAL_ROLES_AGENTS") == "" {
		t.Skip("20 agents in one process, about 70 s on a quiet 2-core machine, minutes under load: make e2e (SHOAL_E2E=1) runs it")
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv("SHOAL_ROLES_AGENTS")); err == nil && v >= 8 {
		n = v // a smaller run while developing
	}
	start := time.Now()
	c := testcluster.New(t, n, testcluster.Options{
		Bin:      testcluster.BuildShoal(t),
		LogLevel: logLevel(),
		Sampler:  func(int) probe.Sampler { return idle{} },
		Configure: func(_ int, cfg *agent.Config) {
			cfg.CoallocTimeout = testcluster.Stretch(30 * time.Second)
			// Twenty agents share two cores with the rest of the suite:
			// gossip, sampling and probes at a gentler pace than the
			// test profile's, and a token bandwidth cycle.
			cfg.Gossip.ProbeInterval, cfg.Gossip.ProbeTimeout = time.Second, 500*time.Millisecond
			cfg.Gossip.GossipInterval = 200 * time.Millisecond
			cfg.SampleInterval = 2 * time.Second
			cfg.Probes.InProcess = true
			cfg.Probes.BandwidthInterval, cfg.Probes.BandwidthBytes, cfg.Probes.Budget = time.Hour, 64<<10, 128<<10
			cfg.Probes.LatencyInterval = 10 * time.Minute
			// Raft with three times the test profile's headroom: at a
			// load average of 20-30 this process gets a few percent of
			// a core, and the 1.5 s profile deposes healthy leaders.
			cfg.Raft.HeartbeatTimeout, cfg.Raft.ElectionTimeout, cfg.Raft.LeaderLeaseTimeout = 5*time.Second, 5*time.Second, 2500*time.Millisecond
			cfg.WriteTimeout = 40 * time.Second
		},
	})
	c.WaitLeader(180 * time.Second)
	// Ask a client: n19 is past the bootstrap set and the first wanted.
	client := n - 1
	got := waitServers(t, c, client, n, 180*time.Second)
	t.Logf("formed in %v: %v", time.Since(start).Round(time.Millisecond), got)
	if !c.Agent(client).Gossip().Self().Raft.Client || c.Agent(client).IsServer() {
		t.Fatalf("%s is not a client: %v", c.Name(client), got)
	}
	// The same from a server, and `shoal nodes`' role.
	waitServers(t, c, c.Index(got.Leader[0]), n, 30*time.Second)
	nodes, err := c.Client(client).Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byRole := map[string]int{}
	for _, nd := range nodes {
		byRole[nd.Role]++
	}
	if byRole["server-voter"] != 3 || byRole["server-nonvoter"] != 2 || byRole["client"] != n-5 {
		t.Fatalf("shoal nodes roles %v, want 3 server-voter, 2 server-nonvoter, %d client", byRole, n-5)
	}

	// A job submitted on a client runs on clients: eight single-process
	// hosts out of twenty, of which five at most are servers. (Not one
	// on every node: a false death under load requeues such a job.)
	id := submitAPI(t, c, client, api.JobSpec{Cmd: []string{"true"}, NP: 8, PPN: 1})
	j := waitState(t, c, client, id, 120*time.Second, "done")
	var onClients []string
	for _, h := range j.Attempts[len(j.Attempts)-1].Hosts {
		if slices.Contains(got.Clients, h.Node) {
			onClients = append(onClients, h.Node)
		}
	}
	if len(onClients) < 3 {
		t.Fatalf("job %d ran on clients %v, want at least 3 of its 8 hosts: %+v", id, onClients, j.Attempts)
	}
	t.Logf("job %d submitted on %s ran on clients %v", id, c.Name(client), onClients)

	// Kill the leader, then two more voters, one by one.
	alive := n
	for k := range 3 {
		cs, err := countRoles(c, client)
		if err != nil {
			t.Fatal(err)
		}
		victim := cs.Leader[0]
		if k > 0 {
			victim = cs.Voters[0]
		}
		killedAt := time.Now()
		c.Kill(c.Index(victim))
		alive--
		// The write is retried as the CLI would, with the same request
		// ID: one attempt may outlast the API client's 30 s while the
		// election runs on a starved machine.
		var res api.ApplyResult
		testcluster.WaitFor(t, 120*time.Second, fmt.Sprintf("a write through client %s after killing %s", c.Name(client), victim), func() bool {
			res, err = c.Client(client).Apply(context.Background(), submitCmd(t, fmt.Sprint("after-kill-", k)))
			return err == nil && res.Err == ""
		}, func() string { return fmt.Sprintf("%v %s (%s)", err, res.Err, c.Describe()) })
		wrote := time.Since(killedAt)
		healed := waitServers(t, c, client, alive, 180*time.Second)
		t.Logf("kill %d (%s): write committed after %v, servers healed after %v: %v", k+1, victim,
			wrote.Round(time.Millisecond), time.Since(killedAt).Round(time.Millisecond), healed)
	}
	// Jobs still run on clients after the losses.
	id = submitAPI(t, c, client, api.JobSpec{Cmd: []string{"true"}, NP: 4, PPN: 1})
	waitState(t, c, client, id, 120*time.Second, "done")
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// logLevel is SHOAL_TEST_LOG (debug, info) or warnings.
func logLevel() slog.Level {
	var l slog.Level
	if l.UnmarshalText([]byte(os.Getenv("SHOAL_TEST_LOG"))) != nil {
		return slog.LevelWarn
	}
	return l
}
