package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/gossip"
)

// bench-scale runs n gossip agents in one process — real memberlist and
// shoal's gossip layer, over memberlist's in-memory MockNetwork instead of
// sockets (a 1,000-node network this machine cannot hold on sockets) —
// and prints how convergence, gossip traffic, push/pull size and memory
// grow with n, with the growth exponent of each figure. Raft and jobs are
// not in it (issue 16's later steps); placement's time at n comes from
// BenchmarkPlace in placement/ (docs/placement.md).
//
// Each size runs in a child process of its own, so that one size's heap
// and leftover goroutines do not bend the next size's figures.
func cmdBenchScale(args []string) error {
	fs := flag.NewFlagSet("bench-scale", flag.ExitOnError)
	sizes := fs.String("n", "100,300,1000", "cluster sizes, comma-separated")
	rounds := fs.Int("rounds", 20, "node-state changes timed per size")
	window := fs.Duration("window", 20*time.Second, "steady window over which gossip bytes are counted")
	update := fs.Duration("update", 0, "how often every agent changes its state in the background (an agent samples every 3s); 0 = never, as bench-gossip")
	seed := fs.Uint64("seed", 1, "seed for joins, churn and the agents changed")
	one := fs.Bool("one", false, "measure the single size -n in this process and print JSON (used by the parent run)")
	fs.Parse(args)
	ns, err := parseSizes(*sizes)
	if err != nil {
		return err
	}
	if *rounds < 1 || *window <= 0 || *update < 0 {
		return fmt.Errorf("-rounds must be >= 1, -window > 0 and -update >= 0")
	}
	o := scaleOpts{Rounds: *rounds, Window: *window, Update: *update, Seed: *seed, Config: scaleConfig()}
	if *one {
		if len(ns) != 1 {
			return fmt.Errorf("-one measures one size; got -n %s", *sizes)
		}
		o.N = ns[0]
		r, err := runScale(context.Background(), o)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary to run each size: %w", err)
	}
	var rs []scaleResult
	for _, n := range ns {
		fmt.Fprintf(os.Stderr, "%d agents...\n", n)
		cmd := exec.Command(exe, "bench-scale", "-one", "-n", strconv.Itoa(n), "-rounds", strconv.Itoa(*rounds),
			"-window", window.String(), "-update", update.String(), "-seed", strconv.FormatUint(*seed, 10))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%d agents: %w", n, err)
		}
		var r scaleResult
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			return fmt.Errorf("%d agents: read result: %w", n, err)
		}
		rs = append(rs, r)
		fmt.Fprintf(os.Stderr, "%d agents: joined in %.1f s, p90 %.0f ms\n", n, r.JoinSeconds, r.ConvP90ms)
	}
	fmt.Printf("gossip at scale: real memberlist + shoal gossip over memberlist's in-memory MockNetwork (not sockets), one process;\n")
	fmt.Printf("every agent changes its state every %v; %d timed changes per size; bytes over %v\n", *update, *rounds, *window)
	printScale(os.Stdout, rs)
	return nil
}

// scaleConfig is the agent's own gossip settings (DefaultConfig), with
// encryption on as every agent runs it (the stream guard admits only
// encrypted streams) and the per-source stream cap lifted: every
// in-memory stream has the same (empty) source address.
func scaleConfig() gossip.Config {
	c := gossip.DefaultConfig()
	c.Key = []byte("bench-scale gossip key, 32 bytes")
	c.MaxStreamsPerSource = c.MaxInboundStreams
	return c
}

func parseSizes(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("bad size %q in -n: want integers >= 2, e.g. -n 100,300,1000", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// scaleColumns are the figures fitted and extrapolated, in table order.
var scaleColumns = []struct {
	name string
	get  func(scaleResult) float64
	fmt  func(float64) string
}{
	{"conv p50", func(r scaleResult) float64 { return r.ConvP50ms }, func(v float64) string { return fmt.Sprintf("%.0f ms", v) }},
	{"conv p90", func(r scaleResult) float64 { return r.ConvP90ms }, func(v float64) string { return fmt.Sprintf("%.0f ms", v) }},
	{"gossip B/node/s", func(r scaleResult) float64 { return r.BytesPerNode }, humanBytes},
	{"push/pull", func(r scaleResult) float64 { return float64(r.PushPull) }, humanBytes},
	{"push/pull with rows", func(r scaleResult) float64 { return float64(r.PushPullRows) }, humanBytes},
	{"heap/agent", func(r scaleResult) float64 { return r.HeapPerAgent }, humanBytes},
	{"rows table/server", func(r scaleResult) float64 { return r.RowsPerAgent }, humanBytes},
}

func printScale(w *os.File, rs []scaleResult) {
	header := "nodes,min alive"
	for _, c := range scaleColumns {
		header += "," + c.name
	}
	var rows [][]string
	ns := make([]int, len(rs))
	for i, r := range rs {
		ns[i] = r.N
		row := []string{strconv.Itoa(r.N), strconv.Itoa(r.MinAlive)}
		for _, c := range scaleColumns {
			row = append(row, c.fmt(c.get(r)))
		}
		rows = append(rows, row)
	}
	exp, at10k := []string{"growth", ""}, []string{"10,000 (extrapolated)", ""}
	for _, c := range scaleColumns {
		ys := make([]float64, len(rs))
		for i, r := range rs {
			ys[i] = c.get(r)
		}
		k, ok := growthExponent(ns, ys)
		exp = append(exp, fmtExponent(k, ok))
		if ok {
			at10k = append(at10k, c.fmt(extrapolate(ns[len(ns)-1], ys[len(ys)-1], k, 10000)))
		} else {
			at10k = append(at10k, "-")
		}
	}
	rows = append(rows, exp, at10k)
	table(w, header, rows)
	fmt.Fprintln(w, "push/pull: one LocalState as gossip encodes it today (every node's state); \"with rows\": the same with every node's")
	fmt.Fprintln(w, "full network row (n-1 peers, as probes fill it), computed by encoding, not run: 1,000 agents with rows would hold")
	fmt.Fprintln(w, "10^9 row cells in one process. memberlist refuses push/pull state over 20 MiB; shoal's decoder over 8 MiB.")
}

func humanBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}
