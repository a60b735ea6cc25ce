package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/internal/deadline"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-gossip measures how long one node's state change takes to reach
// every node, with shoal's gossip settings and with memberlist's LAN
// defaults, on in-process gossip layers over real UDP/TCP on loopback.
// Raft is left out: it plays no part in spreading observed state.
func cmdBenchGossip(args []string) error {
	fs := flag.NewFlagSet("bench-gossip", flag.ExitOnError)
	sizes := fs.String("sizes", "5,20,50", "cluster sizes")
	rounds := fs.Int("rounds", 20, "state changes per size")
	limit := deadline.Flag(fs, 20*time.Minute)
	fs.Parse(args)
	defer deadline.Start("bench-gossip", *limit)()
	var rows [][]string
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 {
			return fmt.Errorf("bad size %q", f)
		}
		for _, profile := range []string{"shoal", "lan"} {
			ds, err := propagation(n, *rounds, profile)
			if err != nil {
				return err
			}
			rows = append(rows, []string{strconv.Itoa(n), profile, ms(median(ds)), ms(pct(ds, 0.9)), ms(pct(ds, 1))})
			fmt.Fprintf(os.Stderr, "%d nodes, %s settings: median %s\n", n, profile, ms(median(ds)))
		}
	}
	fmt.Println("node-state change → seen by every node (in-process, loopback)")
	table(os.Stdout, "nodes,settings,median,p90,max", rows)
	return nil
}

func profileConfig(profile string) gossip.Config {
	c := gossip.DefaultConfig()
	c.BindAddr, c.Port = "127.0.0.1", 0
	// Members accept only encrypted streams (the stream guard refuses the
	// rest before memberlist reads them), so a keyless node's join is
	// refused however often it retries.
	c.Key = []byte("bench-gossip gossip key 32 bytes")
	// Every node on loopback is the same source address.
	c.MaxStreamsPerSource = c.MaxInboundStreams
	if profile == "lan" {
		// memberlist.DefaultLANConfig's values.
		c.GossipInterval, c.GossipNodes, c.PushPullInterval = 200*time.Millisecond, 3, 30*time.Second
	}
	return c
}

func propagation(n, rounds int, profile string) ([]time.Duration, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var gs []*gossip.Gossip
	defer func() {
		for _, g := range gs {
			g.Shutdown()
		}
	}()
	for i := range n {
		c := profileConfig(profile)
		c.Name, c.Logger = fmt.Sprintf("g%02d", i), quiet
		g, err := gossip.New(c, nodestate.NodeState{Static: nodestate.Static{Cores: 4}})
		if err != nil {
			return nil, err
		}
		gs = append(gs, g)
		if i > 0 {
			// Join retries until its context ends: bound it, so a node
			// that cannot join fails the run instead of stalling it.
			_, p := gs[0].LocalAddr()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := g.Join(ctx, []string{"127.0.0.1:" + strconv.Itoa(p)})
			cancel()
			if err != nil {
				return nil, fmt.Errorf("node %d of %d: %w", i+1, n, err)
			}
		}
	}
	if err := testcluster.Poll(180*time.Second, func() bool {
		for _, g := range gs {
			k := 0
			for _, e := range g.Nodes() {
				// States, not liveness: on a loaded machine some of 50
				// in-process memberlists are always briefly suspect.
				if e.HasState {
					k++
				}
			}
			if k != n {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, fmt.Errorf("%d gossip nodes did not converge", n)
	}
	var ds []time.Duration
	for r := 1; r <= rounds; r++ {
		src := gs[r%n]
		name := src.Self().Name
		start := time.Now()
		src.Update(func(s *nodestate.NodeState) { s.Dyn.Users = r })
		if err := pollFast(30*time.Second, func() bool {
			for _, g := range gs {
				e, ok := g.Node(name)
				if !ok || e.State.Dyn.Users != r {
					return false
				}
			}
			return true
		}); err != nil {
			return nil, fmt.Errorf("round %d: change did not reach all %d nodes", r, n)
		}
		ds = append(ds, time.Since(start))
	}
	return ds, nil
}

// pollFast polls every 2 ms: the figure measured is in tens of ms.
func pollFast(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timeout")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}
