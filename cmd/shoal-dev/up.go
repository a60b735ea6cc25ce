package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

func cmdUp(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	n := fs.Int("n", 4, "number of agents")
	dir := fs.String("dir", ".demo", "directory for data, logs, token and cluster.json")
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	base := fs.Int("base-port", 17946, "first port; agent i uses base+3i..base+3i+2")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for the cluster to form")
	fs.Parse(args)
	if _, err := os.Stat(*bin); err != nil {
		return fmt.Errorf("no shoal binary at %s: run 'make build' first", *bin)
	}
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: *n, Dir: *dir, BasePort: *base, Detach: true,
		Args: []string{"--sample-interval", "1s"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "started %d agents; waiting for gossip and a raft leader", *n)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- p.WaitConverged(context.Background(), *timeout) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			fmt.Fprintln(os.Stderr)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "cluster formed in %.1fs\n", time.Since(start).Seconds())
			return nil
		case <-tick.C:
			fmt.Fprint(os.Stderr, ".")
		}
	}
}

func cmdDown(args []string) error {
	fs := flag.NewFlagSet("down", flag.ExitOnError)
	dir := fs.String("dir", ".demo", "directory given to 'up'")
	fs.Parse(args)
	// The agents running on the demo's data dirs, not the PIDs recorded at
	// start: an agent restarted since has another, and a recorded one may
	// belong to another process by now.
	n, err := testcluster.StopAgentsIn(*dir, 10*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "stopped %d agents; logs stay in %s\n", n, *dir)
	if err := os.Remove(*dir + "/cluster.json"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
