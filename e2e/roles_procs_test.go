package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// procsEnv sets the number of agents of TestRoles_TwentyProcesses (at
// least 8; default 20).
const procsEnv = "SHOAL_ROLES_PROCS"

// procCluster is a ProcCluster with one API client per agent (a client
// per call would leave a kept-alive connection per poll on the agents).
type procCluster struct {
	*testcluster.ProcCluster
	cl    []*api.Client
	index map[string]int
}

func (p *procCluster) members(name string) ([]api.Member, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.cl[p.index[name]].Members(ctx)
}

// waitFull waits until node sees 3 voters (the leader one), 2 non-voters
// and every other of the alive agents a client, and returns that census.
func (p *procCluster) waitFull(t *testing.T, node string, alive int, d time.Duration) census {
	t.Helper()
	var got census
	var err error
	testcluster.WaitFor(t, d, fmt.Sprintf("1 leader, 2 voters, 2 non-voters and %d clients seen from %s", alive-5, node), func() bool {
		var ms []api.Member
		ms, err = p.members(node)
		got = countRoles(ms)
		return err == nil && got.full(3, 5, alive)
	}, func() string { return fmt.Sprintf("%v (err %v)", got, err) })
	return got
}

// submit submits req through node, retrying it (the same request ID, as
// the CLI retries) through the next of nodes while one fails, until d.
func (p *procCluster) submit(req api.SubmitRequest, nodes []string, first int, d time.Duration) (uint64, string, error) {
	deadline := time.Now().Add(d)
	var err error
	for i := first; time.Now().Before(deadline); i++ {
		node := nodes[i%len(nodes)]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var res api.SubmitResponse
		res, err = p.cl[p.index[node]].Submit(ctx, req)
		cancel()
		if err == nil {
			return res.ID, node, nil
		}
		time.Sleep(250 * time.Millisecond) // the retry pace of a client, not a synchronisation
	}
	return 0, "", err
}

// trueJob is `shoal submit --force -n NP --ppn 1 --mpi none -- true`:
// forced, as every e2e job, because twenty agents on one 2-core machine
// all sample its load average, and every node looks overloaded.
func trueJob(id string, np int) api.SubmitRequest {
	return api.SubmitRequest{RequestID: id, Owner: "root", Spec: api.JobSpec{Cmd: []string{"true"}, NP: np, PPN: 1,
		MPI: "none", MaxAttempts: 3, Workdir: os.TempDir(), Force: true}}
}

func (p *procCluster) waitDone(t *testing.T, node string, id uint64, d time.Duration) api.Job {
	t.Helper()
	var j api.Job
	var err error
	testcluster.WaitFor(t, d, fmt.Sprintf("job %d done, seen from %s", id, node), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		j, err = p.cl[p.index[node]].Job(ctx, id)
		return err == nil && j.State == "done"
	}, func() string {
		return fmt.Sprintf("job %s (%s; waits: %s), err %v, attempts %+v", j.State, j.Reason, j.WaitReason, err, j.Attempts)
	})
	return j
}

// TestRoles_TwentyProcesses checks the servers-and-clients layout on real processes:
// twenty `shoal agent` processes on loopback, with no role configured,
// form 3 voters, 2 non-voters and 15 clients; a job submitted through a
// client runs on clients; SIGKILL of the leader, then of two more
// servers one by one, keeps a quorum: each time a write through a client
// commits again and the leader promotes a client to bring the servers
// back to 5. Then fifty submissions through every agent while the leader
// is killed: each commits exactly once, and each attempt runs once.
func TestRoles_TwentyProcesses(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skip("end-to-end tests: set " + enableEnv + "=1 (make e2e)")
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv(procsEnv)); err == nil && v >= 8 {
		n = v
	}
	dir := t.TempDir()
	start := time.Now()
	// Ports below the ephemeral range (32768 up): a connection's own
	// port there could hold one of the agents' when they start.
	pc, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: shoalBin(t), N: n, Dir: dir, BasePort: 31946,
		// Loopback: every agent's gossip streams come from one address.
		// Probes at a token pace: twenty agents share two cores.
		Args: []string{"--gossip-max-streams-per-source", "256", "--bandwidth-interval", "1h", "--latency-interval", "10m"}})
	if err != nil {
		t.Fatal(err)
	}
	p := &procCluster{ProcCluster: pc, index: map[string]int{}}
	for i, nd := range pc.Nodes {
		p.cl = append(p.cl, pc.Client(i))
		p.index[nd.Name] = i
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, nd := range pc.Nodes {
				b, _ := os.ReadFile(nd.Log)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				t.Logf("--- %s (last lines of %s)\n%s", nd.Name, nd.Log, strings.Join(lines[max(0, len(lines)-15):], "\n"))
			}
		}
		pc.StopAll()
	})
	last := pc.Nodes[n-1].Name
	got := p.waitFull(t, last, n, 4*time.Minute)
	formed := time.Since(start)
	t.Logf("%d agents formed in %v: %v", n, formed.Round(time.Millisecond), got)
	// Every agent sees the same.
	for _, nd := range pc.Nodes {
		if c := p.waitFull(t, nd.Name, n, time.Minute); !slices.Equal(c.servers(), got.servers()) {
			t.Logf("%s sees servers %v, %s sees %v (a promotion in between?)", nd.Name, c.servers(), last, got.servers())
		}
	}

	// A job through a client runs on clients: eight single-process hosts.
	cli := got.Clients[0]
	id, _, err := p.submit(trueJob("roles-first", 8), []string{cli}, 0, 2*time.Minute)
	if err != nil {
		t.Fatalf("submit through client %s: %v", cli, err)
	}
	j := p.waitDone(t, cli, id, 2*time.Minute)
	if on := onClients(j, got.Clients); len(on) < 3 {
		t.Fatalf("job %d ran on clients %v, want at least 3 of its 8 hosts: %+v", id, on, j.Attempts)
	} else {
		t.Logf("job %d submitted through client %s ran on clients %v", id, cli, on)
	}

	// SIGKILL the leader, then two more servers, one at a time.
	alive := n
	var times []string
	for k := range 3 {
		cs := p.waitFull(t, cli, alive, 3*time.Minute)
		victim := cs.Leader[0]
		if k > 0 {
			victim = cs.Voters[0]
		}
		writer := cs.Clients[len(cs.Clients)-1]
		killed := time.Now()
		if err := pc.Kill(p.index[victim]); err != nil {
			t.Fatal(err)
		}
		alive--
		if _, _, err := p.submit(trueJob(fmt.Sprint("after-kill-", k), 1), []string{writer}, 0, 3*time.Minute); err != nil {
			t.Fatalf("write through client %s after killing %s: %v", writer, victim, err)
		}
		wrote := time.Since(killed)
		healed := p.waitFull(t, writer, alive, 3*time.Minute)
		took := time.Since(killed)
		if slices.Contains(healed.servers(), victim) {
			t.Fatalf("%s still listed as a server after its kill: %v", victim, healed)
		}
		times = append(times, fmt.Sprintf("kill %d (%s, %s): write %v, 5 servers %v",
			k+1, victim, map[bool]string{true: "leader", false: "voter"}[k == 0], wrote.Round(time.Millisecond), took.Round(time.Millisecond)))
		t.Logf("%s: %v", times[len(times)-1], healed)
	}
	cs := p.waitFull(t, cli, alive, 3*time.Minute)
	id, _, err = p.submit(trueJob("roles-after", 4), []string{cs.Clients[0]}, 0, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p.waitDone(t, cs.Clients[0], id, 2*time.Minute)

	// Exactly once under a leader kill, through the new layout: fifty
	// submissions spread over every alive agent (clients forward to the
	// leader), the leader killed after the first ten; a submission whose
	// agent fails retries the same request ID on the next agent, and every
	// one is retried once more at the end, as a client whose answer was
	// lost would.
	obs := cs.Clients[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	before, err := p.cl[p.index[obs]].Jobs(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	targets := slices.Concat(cs.servers(), cs.Clients)
	leader := cs.Leader[0]
	runs := filepath.Join(dir, "runs")
	const jobs = 50
	once := func(k int) api.SubmitRequest {
		return api.SubmitRequest{RequestID: fmt.Sprint("once-", k), Owner: "root", Spec: api.JobSpec{
			Cmd: []string{"sh", "-c", `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT" >> ` + runs}, NP: 1, MPI: "none",
			MaxAttempts: 3, Workdir: os.TempDir(), Oversubscribe: true, Force: true}}
	}
	ids := make([]uint64, jobs)
	errs := make([]error, jobs)
	var wg sync.WaitGroup
	var killedAt time.Time
	for k := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if k == jobs/5 {
				killedAt = time.Now()
				if err := pc.Kill(p.index[leader]); err != nil {
					errs[k] = err
					return
				}
			}
			ids[k], _, errs[k] = p.submit(once(k), targets, k, 3*time.Minute)
		}()
	}
	wg.Wait()
	alive--
	for k, err := range errs {
		if err != nil {
			t.Fatalf("submission %d never committed: %v", k, err)
		}
	}
	committed := time.Since(killedAt)
	rest := slices.DeleteFunc(slices.Clone(targets), func(s string) bool { return s == leader })
	for k := range jobs {
		id, via, err := p.submit(once(k), rest, k+1, 2*time.Minute)
		if err != nil {
			t.Fatalf("retry of submission %d: %v", k, err)
		}
		if id != ids[k] {
			t.Errorf("retry of submission %d through %s made job %d, the first try made job %d: a committed submit ran twice", k, via, id, ids[k])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, id := range ids {
		p.waitDone(t, obs, id, 3*time.Minute)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	after, err := p.cl[p.index[obs]].Jobs(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+jobs {
		t.Fatalf("%d jobs after fifty submissions on %d: a retried submission was duplicated or lost", len(after), len(before))
	}
	b, _ := os.ReadFile(runs)
	seen := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		seen[l]++
	}
	for _, j := range after {
		if !slices.Contains(ids, j.ID) {
			continue
		}
		if final := fmt.Sprintf("%d,%d", j.ID, j.Attempt); seen[final] != 1 {
			t.Errorf("job %d's final attempt %d ran %d times", j.ID, j.Attempt, seen[final])
		}
	}
	for l, c := range seen {
		if c > 1 {
			t.Errorf("attempt %s ran %d times: two live copies of one attempt", l, c)
		}
	}
	healed := p.waitFull(t, obs, alive, 3*time.Minute)
	times = append(times, fmt.Sprintf("kill 4 (%s, leader, during 50 submissions): all committed %v, 5 servers %v",
		leader, committed.Round(time.Millisecond), time.Since(killedAt).Round(time.Millisecond)))
	t.Logf("%s: %v", times[len(times)-1], healed)
	t.Logf("summary: %d agents formed in %v; %s; total %v", n, formed.Round(time.Millisecond),
		strings.Join(times, "; "), time.Since(start).Round(time.Second))
}
