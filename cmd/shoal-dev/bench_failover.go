package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-failover measures, on a 5-agent process cluster with 3 voters:
// from kill -9 of the leader to the first write committed through another
// node, and to the dead voter's replacement by a promoted non-voter.
func cmdBenchFailover(args []string) error {
	fs := flag.NewFlagSet("bench-failover", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	runs := fs.Int("runs", 10, "number of leader kills")
	grace := fs.Duration("grace", 2*time.Second, "--dead-voter-grace given to the agents")
	deadline := deadlineFlag(fs, time.Hour)
	fs.Parse(args)
	defer startDeadline("bench-failover", *deadline)()
	dir, err := os.MkdirTemp("", "shoal-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: 5, Dir: dir, BasePort: 37946,
		Args: []string{"--dead-voter-grace", grace.String()}})
	if err != nil {
		return err
	}
	defer p.StopAll()
	ctx := context.Background()
	if err := p.WaitConverged(ctx, 60*time.Second); err != nil {
		return err
	}
	var writes, replaced []time.Duration
	for r := range *runs {
		leader, err := leaderIndex(ctx, p)
		if err != nil {
			return err
		}
		other := (leader + 1) % 5
		if err := p.Kill(leader); err != nil {
			return err
		}
		t0 := time.Now()
		seq := 0
		for {
			seq++
			cmd, _ := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Now(), raftfsm.SubmitJob{
				RequestID: fmt.Sprintf("failover-%d-%d", r, seq), Owner: "bench", Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}})
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			res, err := p.Client(other).Apply(wctx, cmd)
			cancel()
			if err == nil && res.Err == "" {
				break
			}
			if time.Since(t0) > 60*time.Second {
				return fmt.Errorf("run %d: no write committed 60s after the leader died", r)
			}
		}
		writes = append(writes, time.Since(t0))
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
			return voters == 3 && !deadVotes
		}); err != nil {
			return fmt.Errorf("run %d: dead voter %s not replaced", r, dead)
		}
		replaced = append(replaced, time.Since(t0))
		fmt.Fprintf(os.Stderr, "run %d: write after %v, voter replaced after %v\n", r+1, writes[r].Round(time.Millisecond), replaced[r].Round(time.Millisecond))
		if err := p.Restart(leader); err != nil {
			return err
		}
		if err := p.WaitConverged(ctx, 60*time.Second); err != nil {
			return err
		}
	}
	fmt.Printf("leader failover, 5 agents / 3 voters on loopback, %d runs, heartbeat 500ms, election 500ms, dead-voter grace %v\n", *runs, *grace)
	table(os.Stdout, "measure,median,max", [][]string{
		{"kill -9 leader → first committed write via another node", ms(median(writes)), ms(pct(writes, 1))},
		{"kill -9 leader → dead voter replaced", ms(median(replaced)), ms(pct(replaced, 1))},
	})
	return nil
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
