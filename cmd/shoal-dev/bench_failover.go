package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/internal/deadline"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-failover measures, on a 5-agent process cluster with 3 voters:
// from kill -9 of the leader to the first write committed through another
// node, to the dead voter's leaving the voters, and to its replacement by
// a promoted non-voter. With -soak it first leaves the cluster alone that
// long and counts the elections its agents start and the leaders they
// elect: on a healthy cluster both are zero, so any is a false election
// (an agent that missed the leader's heartbeats on a busy machine).
func cmdBenchFailover(args []string) error {
	fs := flag.NewFlagSet("bench-failover", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	runs := fs.Int("runs", 10, "number of leader kills")
	grace := fs.Duration("grace", 0, "--dead-voter-grace given to the agents; 0 = the agent's default")
	soak := fs.Duration("soak", 0, "before the kills, leave the cluster alone this long and count false elections")
	basePort := fs.Int("base-port", 29946, "first of the 15 loopback ports the agents use, below the ephemeral range (two runs side by side need ports apart)")
	limit := deadline.Flag(fs, time.Hour)
	fs.Parse(args)
	defer deadline.Start("bench-failover", *limit)()
	if *runs < 0 || *soak < 0 || *grace < 0 {
		return fmt.Errorf("-runs, -soak and -grace must not be negative")
	}
	d := agent.DefaultConfig()
	var extra []string
	if *grace > 0 {
		extra = append(extra, "--dead-voter-grace", grace.String())
	} else {
		*grace = d.DeadVoterGrace
	}
	dir, err := os.MkdirTemp("", "shoal-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: 5, Dir: dir, BasePort: *basePort, Args: extra})
	if err != nil {
		return err
	}
	defer p.StopAll()
	ctx := context.Background()
	if err := p.WaitConverged(ctx, 60*time.Second); err != nil {
		return err
	}
	t := d.Raft
	fmt.Printf("leader failover, 5 agents / 3 voters on loopback, raft heartbeat %v, election %v, leader lease %v (raft is given 1ms less, under the heartbeat timeout), dead-voter grace %v\n",
		t.HeartbeatTimeout, t.ElectionTimeout, t.LeaderLeaseTimeout, *grace)
	if *soak > 0 {
		elections, leaders, err := soakElections(ctx, p, *soak)
		if err != nil {
			return err
		}
		fmt.Printf("soak: %v with no fault: %d elections started, %d leaders elected (1-minute load average at the end %.1f)\n", *soak, elections, leaders, loadAvg())
	}
	if *runs == 0 {
		return nil
	}
	var writes, unvoted, replaced []time.Duration
	for r := range *runs {
		w, u, rep, err := failoverRun(ctx, p, r)
		if err != nil {
			return err
		}
		writes, unvoted, replaced = append(writes, w), append(unvoted, u), append(replaced, rep)
		fmt.Fprintf(os.Stderr, "run %d: write after %v, dead voter out of the voters after %v, replaced after %v\n",
			r+1, w.Round(time.Millisecond), u.Round(time.Millisecond), rep.Round(time.Millisecond))
	}
	fmt.Printf("%d runs (1-minute load average at the end %.1f)\n", *runs, loadAvg())
	table(os.Stdout, "measure,median,max", [][]string{
		{"kill -9 leader → first committed write via another node", ms(median(writes)), ms(pct(writes, 1))},
		{"kill -9 leader → dead voter out of the voters", ms(median(unvoted)), ms(pct(unvoted, 1))},
		{"kill -9 leader → dead voter replaced", ms(median(replaced)), ms(pct(replaced, 1))},
	})
	return nil
}

// failoverRun kills the leader and times the first write through another
// agent, the dead voter's demotion or removal, and three live voters
// again; then restarts the dead agent and waits for the cluster.
func failoverRun(ctx context.Context, p *testcluster.ProcCluster, r int) (write, unvoted, replaced time.Duration, err error) {
	// A cluster that has just formed may still be promoting its third
	// voter; killing the leader of two voters loses the quorum, which is
	// raft's arithmetic, not a failover to time.
	if err := testcluster.Poll(60*time.Second, func() bool {
		v, _ := voterCount(ctx, p)
		return v == 3
	}); err != nil {
		v, err := voterCount(ctx, p)
		return 0, 0, 0, fmt.Errorf("run %d: %d voters before the kill, want 3 (%v)", r+1, v, err)
	}
	leader, err := leaderIndex(ctx, p)
	if err != nil {
		return 0, 0, 0, err
	}
	other := (leader + 1) % len(p.Nodes)
	if err := p.Kill(leader); err != nil {
		return 0, 0, 0, err
	}
	t0 := time.Now()
	for seq := 1; ; seq++ {
		cmd, _ := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Now(), raftfsm.SubmitJob{
			RequestID: fmt.Sprintf("failover-%d-%d", r, seq), Owner: "bench", Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}})
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		res, err := p.Client(other).Apply(wctx, cmd)
		cancel()
		if err == nil && res.Err == "" {
			break
		}
		if time.Since(t0) > 60*time.Second {
			why := err
			if why == nil {
				why = errors.New(res.Err)
			}
			return 0, 0, 0, fmt.Errorf("run %d: no write committed 60s after the leader died; the last try: %w", r+1, why)
		}
	}
	write = time.Since(t0)
	dead := p.Nodes[leader].Name
	if err := testcluster.Poll(120*time.Second, func() bool {
		ms, err := p.Client(other).Members(ctx)
		if err != nil {
			return false
		}
		voters, deadVotes := 0, false
		for _, m := range ms {
			if m.Role == "leader" || m.Role == "voter" {
				voters++
				deadVotes = deadVotes || m.Name == dead
			}
		}
		if !deadVotes && unvoted == 0 {
			unvoted = time.Since(t0)
		}
		return voters == 3 && !deadVotes
	}); err != nil {
		return 0, 0, 0, fmt.Errorf("run %d: dead voter %s not replaced within 120s", r+1, dead)
	}
	replaced = time.Since(t0)
	if err := p.Restart(leader); err != nil {
		return 0, 0, 0, err
	}
	return write, unvoted, replaced, p.WaitConverged(ctx, 60*time.Second)
}

// voterCount counts the live voters, the leader among them, as the first
// running agent that answers lists them.
func voterCount(ctx context.Context, p *testcluster.ProcCluster) (int, error) {
	var err error
	for i := range p.Nodes {
		if p.Nodes[i].PID == 0 {
			continue
		}
		ms, e := p.Client(i).Members(ctx)
		if e != nil {
			err = e
			continue
		}
		n := 0
		for _, m := range ms {
			if (m.Role == "leader" || m.Role == "voter") && m.Status == "alive" {
				n++
			}
		}
		return n, nil
	}
	return 0, fmt.Errorf("no agent lists the members: %w", err)
}

// soakElections leaves the cluster alone for d and counts, in the agents'
// logs, the elections started (raft's "entering candidate state", which
// pre-vote may still stop) and the leaders elected.
func soakElections(ctx context.Context, p *testcluster.ProcCluster, d time.Duration) (elections, leaders int, err error) {
	before := make([]int64, len(p.Nodes))
	for i, n := range p.Nodes {
		st, err := os.Stat(n.Log)
		if err != nil {
			return 0, 0, err
		}
		before[i] = st.Size()
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		// The soak's own pace, not a synchronisation: a look every 10 s
		// shows a run that lost its cluster before the soak ends.
		time.Sleep(min(10*time.Second, time.Until(end)))
		if _, err := leaderIndex(ctx, p); err != nil {
			return 0, 0, fmt.Errorf("soak: %w", err)
		}
	}
	for i, n := range p.Nodes {
		b, err := os.ReadFile(n.Log)
		if err != nil {
			return 0, 0, err
		}
		b = b[min(int64(len(b)), before[i]):]
		elections += bytes.Count(b, []byte(`msg="entering candidate state"`))
		leaders += bytes.Count(b, []byte(`msg="entering leader state"`))
	}
	return elections, leaders, nil
}

func leaderIndex(ctx context.Context, p *testcluster.ProcCluster) (int, error) {
	for i := range p.Nodes {
		if p.Nodes[i].PID == 0 {
			continue
		}
		l, err := p.Client(i).Leader(ctx)
		if err != nil {
			continue
		}
		for j, n := range p.Nodes {
			if n.Name == l.Name {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("no leader")
}
