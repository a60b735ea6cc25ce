package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-array times an array of short tasks through a 4-agent process
// cluster on loopback: one submit of -tasks tasks of /bin/true, then, from
// the tasks' own records, the time from the submit to the last task's end
// and the tasks per second. The wait for the end polls the job list every
// second; the figure comes from the recorded times, not from the polls.
// The agents keep every finished task (--max-finished-jobs 0) so that the
// list holds them all. With -stages (the default) the agents log their
// launch stage lines, and the bench prints where the tasks' time went
// (printArrayStages); debug logging costs the agents a little CPU, the
// same for every build compared.
func cmdBenchArray(args []string) error {
	fs := flag.NewFlagSet("bench-array", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	tasks := fs.Int("tasks", 1000, "tasks of the array (at most 10,000)")
	port := fs.Int("port", 30946, "first port of the agents (three each; below the ephemeral range)")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after")
	stages := fs.Bool("stages", true, "run the agents with debug JSON logs and print where the tasks' time went (launch stage lines)")
	killLeader := fs.Bool("kill-leader", false, "kill -9 the leader's agent once half the tasks ended, and check that every task ran once per attempt (the tasks append their job and attempt to a file instead of running /bin/true)")
	fs.Parse(args)
	if *tasks < 1 || *tasks > 10000 {
		return fmt.Errorf("-tasks %d: want 1 to 10000 (an array's bound)", *tasks)
	}
	dir, err := os.MkdirTemp("", "shoal-array-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if keep {
			fmt.Fprintf(os.Stderr, "the agents' logs are kept in %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}()
	// No wait for the network model: a cluster that has run for a while
	// has one, and a bench that submits as the cluster forms would time
	// the model's first measurements (seconds), not the array.
	agentArgs := []string{"--max-queued-jobs", "0", "--max-user-procs", "0", "--max-finished-jobs", "0", "--placement-model-wait", "0"}
	if *stages {
		agentArgs = append(agentArgs, "--log-level", "debug", "--log-json")
	}
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: 4, Dir: dir, BasePort: *port, Args: agentArgs})
	if err != nil {
		return err
	}
	defer p.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := p.WaitConverged(ctx, 60*time.Second); err != nil {
		return err
	}
	me, err := user.Current()
	if err != nil {
		return err
	}
	c := p.Client(1)
	arr := &api.ArraySpec{Tasks: make([]int, *tasks)}
	for i := range arr.Tasks {
		arr.Tasks[i] = i
	}
	spec := api.JobSpec{Cmd: []string{"/bin/true"}, NP: 1, MPI: "none", Force: true, Oversubscribe: true, Array: arr}
	runs := filepath.Join(dir, "runs")
	if *killLeader {
		// A task on the killed node is retried: an attempt of its own.
		spec.Cmd = []string{"/bin/sh", "-c", `echo "$SHOAL_JOB_ID,$SHOAL_ATTEMPT" >> ` + runs}
		spec.MaxAttempts = 3
	}
	start := time.Now()
	res, err := c.Submit(ctx, api.SubmitRequest{RequestID: fmt.Sprint("bench-array-", start.UnixNano()), Owner: me.Username, Spec: spec})
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	submitted := time.Since(start)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	killed := ""
	for {
		jobs, err := c.JobsWhere(ctx, api.JobsQuery{})
		if err != nil {
			return fmt.Errorf("list jobs: %w", err)
		}
		done, failed, first := 0, 0, time.Time{}
		var last time.Time
		for _, j := range jobs {
			if j.ID < res.ID || j.ID >= res.ID+uint64(*tasks) {
				continue
			}
			switch j.State {
			case "done":
				done++
			case "failed", "killed":
				failed++
			}
			if first.IsZero() || j.SubmittedAt.Before(first) {
				first = j.SubmittedAt
			}
			if j.EndedAt != nil && j.EndedAt.After(last) {
				last = *j.EndedAt
			}
		}
		if *killLeader && killed == "" && 2*(done+failed) >= *tasks {
			if killed, c, err = killTheLeader(ctx, p); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "  %s: killed the leader, %s\n", time.Since(start).Round(time.Second), killed)
			continue
		}
		if done+failed == *tasks {
			span := last.Sub(start)
			fmt.Printf("array of %d tasks of %s, 4-agent cluster on loopback\n", *tasks, strings.Join(spec.Cmd, " "))
			table(os.Stdout, "tasks,done,failed,submit answered,submit → last end,tasks/s", [][]string{{
				fmt.Sprint(*tasks), fmt.Sprint(done), fmt.Sprint(failed), ms(submitted), fmt.Sprintf("%.2f s", span.Seconds()),
				fmt.Sprintf("%.0f", float64(*tasks)/span.Seconds())}})
			if *stages {
				if err := printArrayStages(os.Stdout, p, res.ID, *tasks, start); err != nil {
					return err
				}
			}
			if failed > 0 {
				keep = true
				return fmt.Errorf("%d tasks failed", failed)
			}
			if *killLeader {
				if err := checkRunsOnce(runs, jobs, res.ID, *tasks, killed); err != nil {
					keep = true
					return err
				}
			}
			return nil
		}
		fmt.Fprintf(os.Stderr, "  %s: %d of %d done, %d failed\n", time.Since(start).Round(time.Second), done, *tasks, failed)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d tasks ended after %v: %w", done+failed, *tasks, *timeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// killTheLeader kills -9 the agent that leads and returns its name and a
// client of an agent that lives on.
func killTheLeader(ctx context.Context, p *testcluster.ProcCluster) (string, *api.Client, error) {
	l, err := p.Client(1).Leader(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("find the leader: %w", err)
	}
	i := slices.IndexFunc(p.Nodes, func(n testcluster.ProcNode) bool { return n.Name == l.Name })
	if i < 0 {
		return "", nil, fmt.Errorf("the leader %q is none of the agents", l.Name)
	}
	if err := p.Kill(i); err != nil {
		return "", nil, fmt.Errorf("kill the leader %s: %w", l.Name, err)
	}
	return l.Name, p.Client((i + 1) % len(p.Nodes)), nil
}

// checkRunsOnce reads the tasks' record of their runs, one "job,attempt"
// line a run, and checks exactly-once: no attempt ran twice, every task
// ran, and each task's attempt that ended done ran. It prints how many
// tasks ran more than one attempt (those the killed node held).
func checkRunsOnce(runs string, jobs []api.Job, first uint64, tasks int, killed string) error {
	b, err := os.ReadFile(runs)
	if err != nil {
		return fmt.Errorf("the tasks' runs: %w", err)
	}
	seen := map[[2]uint64]int{}
	for _, l := range strings.Fields(string(b)) {
		j, a, ok := strings.Cut(l, ",")
		id, err1 := strconv.ParseUint(j, 10, 64)
		n, err2 := strconv.ParseUint(a, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("the tasks' runs: line %q is not job,attempt", l)
		}
		seen[[2]uint64{id, n}]++
	}
	retried := 0
	for _, j := range jobs {
		if j.ID < first || j.ID >= first+uint64(tasks) {
			continue
		}
		if len(j.Attempts) > 1 {
			retried++
		}
		for _, a := range j.Attempts {
			if k := seen[[2]uint64{j.ID, uint64(a.N)}]; k > 1 {
				return fmt.Errorf("task %d attempt %d ran %d times", j.ID, a.N, k)
			}
		}
		if last := j.Attempts[len(j.Attempts)-1]; seen[[2]uint64{j.ID, uint64(last.N)}] != 1 {
			return fmt.Errorf("task %d ended %s with attempt %d, which did not run", j.ID, j.State, last.N)
		}
	}
	fmt.Printf("leader %s killed: every attempt ran at most once, every task's last attempt ran; %d tasks ran more than one attempt\n", killed, retried)
	return nil
}
