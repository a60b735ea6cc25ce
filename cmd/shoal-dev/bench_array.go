package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/user"
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
// list holds them all.
func cmdBenchArray(args []string) error {
	fs := flag.NewFlagSet("bench-array", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	tasks := fs.Int("tasks", 1000, "tasks of the array (at most 10,000)")
	port := fs.Int("port", 30946, "first port of the agents (three each; below the ephemeral range)")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after")
	fs.Parse(args)
	if *tasks < 1 || *tasks > 10000 {
		return fmt.Errorf("-tasks %d: want 1 to 10000 (an array's bound)", *tasks)
	}
	dir, err := os.MkdirTemp("", "shoal-array-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: 4, Dir: dir, BasePort: *port,
		Args: []string{"--max-queued-jobs", "0", "--max-user-procs", "0", "--max-finished-jobs", "0"}})
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
	start := time.Now()
	res, err := c.Submit(ctx, api.SubmitRequest{RequestID: fmt.Sprint("bench-array-", start.UnixNano()), Owner: me.Username,
		Spec: api.JobSpec{Cmd: []string{"/bin/true"}, NP: 1, MPI: "none", Force: true, Oversubscribe: true, Array: arr}})
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	submitted := time.Since(start)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
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
		if done+failed == *tasks {
			span := last.Sub(start)
			fmt.Printf("array of %d tasks of /bin/true, 4-agent cluster on loopback\n", *tasks)
			table(os.Stdout, "tasks,done,failed,submit answered,submit → last end,tasks/s", [][]string{{
				fmt.Sprint(*tasks), fmt.Sprint(done), fmt.Sprint(failed), ms(submitted), fmt.Sprintf("%.2f s", span.Seconds()),
				fmt.Sprintf("%.0f", float64(*tasks)/span.Seconds())}})
			if failed > 0 {
				return fmt.Errorf("%d tasks failed", failed)
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
