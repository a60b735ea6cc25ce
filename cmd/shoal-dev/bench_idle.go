package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/internal/deadline"
	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-idle starts a 4-agent process cluster, lets it settle, and reads
// each agent's CPU time and resident memory from /proc, and the TCP
// segments it sent from the kernel's socket statistics, over a window.
//
// With -vs, other binaries (comma-separated) each run a cluster of their
// own (the next 12 ports each) measured over the same window: an idle
// cost is a few percent of a core, which a shared machine's load moves
// more between minutes than a change does.
func cmdBenchIdle(args []string) error {
	fs := flag.NewFlagSet("bench-idle", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	vs := fs.String("vs", "", "other shoal binaries, comma-separated, each measured on a cluster of its own over the same window")
	window := fs.Duration("window", 30*time.Second, "measurement window")
	port := fs.Int("port", 27946, "first port of the agents (three each; below the ephemeral range, where a connection's own port cannot take one)")
	// The window plus a few minutes to start and settle the cluster.
	limit := deadline.Flag(fs, 10*time.Minute)
	fs.Parse(args)
	defer deadline.Start("bench-idle", *limit)()
	bins := []string{*bin}
	if *vs != "" {
		bins = append(bins, strings.Split(*vs, ",")...)
	}
	dir, err := os.MkdirTemp("", "shoal-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var clusters []*testcluster.ProcCluster
	for i, b := range bins {
		cdir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(cdir, 0o755); err != nil {
			return err
		}
		p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: b, N: 4, Dir: cdir, BasePort: *port + 12*i})
		if err != nil {
			return err
		}
		defer p.StopAll()
		clusters = append(clusters, p)
	}
	for _, p := range clusters {
		if err := p.WaitConverged(context.Background(), 60*time.Second); err != nil {
			return err
		}
	}
	t0 := map[int]float64{}
	for _, p := range clusters {
		for _, n := range p.Nodes {
			t0[n.PID], _ = cpuSeconds(n.PID)
		}
	}
	s0, err := readTCPSegs()
	if err != nil {
		return err
	}
	time.Sleep(*window) // the measurement window itself
	s1, err := readTCPSegs()
	if err != nil {
		return err
	}
	for i, p := range clusters {
		var rows [][]string
		var cpu, segs float64
		for _, n := range p.Nodes {
			t1, err := cpuSeconds(n.PID)
			if err != nil {
				return err
			}
			rss, _ := rssKiB(n.PID)
			c := (t1 - t0[n.PID]) / window.Seconds()
			sg := float64(s1.sentSince(s0, n.PID)) / window.Seconds()
			cpu += c
			segs += sg
			rows = append(rows, []string{n.Name, fmt.Sprintf("%.2f%%", 100*c), fmt.Sprintf("%.1f MiB", float64(rss)/1024), fmt.Sprintf("%.0f", sg)})
		}
		rows = append(rows, []string{"all", fmt.Sprintf("%.2f%%", 100*cpu), "", fmt.Sprintf("%.0f", segs)})
		fmt.Printf("\n%s: idle agent (4-agent cluster on loopback, window %v)\n", bins[i], *window)
		table(os.Stdout, "agent,cpu (of one core),rss,tcp segments sent/s", rows)
	}
	return nil
}

func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // USER_HZ is 100 on Linux
}

func rssKiB(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strconv.Atoi(strings.Fields(l)[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}
