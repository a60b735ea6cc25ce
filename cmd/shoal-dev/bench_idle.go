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
// each agent's CPU time and resident memory from /proc over a window.
func cmdBenchIdle(args []string) error {
	fs := flag.NewFlagSet("bench-idle", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	window := fs.Duration("window", 30*time.Second, "measurement window")
	// The window plus a few minutes to start and settle the cluster.
	limit := deadline.Flag(fs, 10*time.Minute)
	fs.Parse(args)
	defer deadline.Start("bench-idle", *limit)()
	dir, err := os.MkdirTemp("", "shoal-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: 4, Dir: dir, BasePort: 27946})
	if err != nil {
		return err
	}
	defer p.StopAll()
	if err := p.WaitConverged(context.Background(), 60*time.Second); err != nil {
		return err
	}
	t0 := make([]float64, 4)
	for i, n := range p.Nodes {
		t0[i], _ = cpuSeconds(n.PID)
	}
	time.Sleep(*window) // the measurement window itself
	var rows [][]string
	for i, n := range p.Nodes {
		t1, err := cpuSeconds(n.PID)
		if err != nil {
			return err
		}
		rss, _ := rssKiB(n.PID)
		rows = append(rows, []string{n.Name, fmt.Sprintf("%.2f%%", 100*(t1-t0[i])/window.Seconds()), fmt.Sprintf("%.1f MiB", float64(rss)/1024)})
	}
	fmt.Printf("idle agent (4-agent cluster on loopback, sample interval 3s, window %v)\n", *window)
	table(os.Stdout, "agent,cpu (of one core),rss", rows)
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
