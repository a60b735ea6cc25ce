package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/deadline"
	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// cmdVivaldiError measures how well the Vivaldi network coordinates
// predict the round trips the latency probe measures directly:
// it brings a topology up on the network-namespace testbed with one real
// agent per node, lets the coordinates settle, and prints per node pair
// the direct RTT, the estimate and the relative error |est - rtt| / rtt,
// then the median over pairs of each snapshot.
func cmdVivaldiError(args []string) error {
	fs := flag.NewFlagSet("vivaldi-error", flag.ExitOnError)
	topoPath := fs.String("topology", "testbed/lab12.json", "testbed topology (JSON)")
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	settle := fs.Duration("settle", 3*time.Minute, "how long the coordinates settle after the cluster formed")
	snaps := fs.Int("snapshots", 3, "snapshots of 'shoal net --json' to take")
	every := fs.Duration("every", 30*time.Second, "time between snapshots")
	noHogs := fs.Bool("no-hogs", false, "leave the topology's CPU hogs out")
	minOf := fs.Int("min-of", 1, "agents' --coordinate-min-of: the minimum of how many ping RTTs feeds each update")
	limit := deadline.Flag(fs, time.Hour)
	fs.Parse(args)
	defer deadline.Start("vivaldi-error", *limit)()
	if *snaps < 1 {
		return fmt.Errorf("-snapshots %d: take at least 1", *snaps)
	}
	if ok, why := netns.Available(); !ok {
		return fmt.Errorf("needs the netns testbed: %s", why)
	}
	topo, err := netns.LoadTopology(*topoPath)
	if err != nil {
		return err
	}
	if *noHogs {
		topo.Hogs = nil
	}
	shoal, err := filepath.Abs(*bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(shoal); err != nil {
		return fmt.Errorf("no shoal binary at %s: run 'make build' first", shoal)
	}
	ctx := context.Background()
	start := time.Now()
	say := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	say("bringing up %s: %d nodes, %d switches, %d flows, %d hog nodes", topo.Name, len(topo.Nodes), len(topo.Switches), len(topo.Flows), len(topo.Hogs))
	l, err := lab.Up(ctx, topo, lab.Options{
		Shoal:  shoal,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		// Direct pings every 10 s so that every pair has a 1-minute mean;
		// bandwidth cycles rarely, so their bulk tests do not queue pings.
		AgentArgs: []string{"--latency-interval", "10s", "--bandwidth-interval", "1h", "--coordinate-min-of", fmt.Sprint(*minOf)},
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := l.Close(); err != nil {
			say("teardown: %v", err)
		}
	}()
	if _, err := l.WaitFormed(ctx, 2*time.Minute); err != nil {
		return err
	}
	nodes := l.Nodes()
	asker := nodes[len(nodes)-1]
	say("cluster formed; coordinates settle for %v, then %d snapshots of %s's 'shoal net --json' every %v", *settle, *snaps, asker, *every)
	time.Sleep(*settle) // a measurement's duration, not synchronisation
	var medians []float64
	var rows []vivaldiRow
	for i := range *snaps {
		if i > 0 {
			time.Sleep(*every) // spacing between snapshots
		}
		pairs, err := l.Net(ctx, asker)
		if err != nil {
			return err
		}
		rows = vivaldiRows(pairs)
		m, _ := medianRelErr(rows)
		medians = append(medians, m)
		say("snapshot %d: %d pairs with both figures, median relative error %.3f", i+1, len(rows), m)
	}
	writeVivaldiTable(os.Stdout, rows)
	sw := map[string]string{}
	for _, n := range topo.Nodes {
		sw[n.Name] = n.Switch
	}
	var same, cross []vivaldiRow
	for _, r := range rows {
		if sw[r.A] == sw[r.B] {
			same = append(same, r)
		} else {
			cross = append(cross, r)
		}
	}
	for _, g := range []struct {
		what string
		rows []vivaldiRow
	}{{"same switch", same}, {"across switches", cross}} {
		if m, ok := medianRelErr(g.rows); ok {
			fmt.Printf("%s: %d pairs, median relative error %.3f, median |est - direct| %.3f ms\n", g.what, len(g.rows), m, medianAbsErr(g.rows))
		}
	}
	med := make([]string, len(medians))
	for i, m := range medians {
		med[i] = fmt.Sprintf("%.3f", m)
	}
	fmt.Printf("median relative error per snapshot: %s (%s, %d nodes, --coordinate-min-of %d)\n", strings.Join(med, " "), topo.Name, len(nodes), *minOf)
	return nil
}

// vivaldiRow is one unordered node pair: the direct RTT (the 1-minute mean
// of the latency probe, averaged over the two directions that have one)
// and the coordinate estimate, in ms.
type vivaldiRow struct {
	A, B        string
	Direct, Est float64
}

// RelErr is |est - direct| / direct, the error Serf and Consul report.
func (r vivaldiRow) RelErr() float64 { return math.Abs(r.Est-r.Direct) / r.Direct }

// vivaldiRows folds GET /v1/net's ordered pairs into unordered ones that
// have both a direct RTT and an estimate, sorted by name.
func vivaldiRows(pairs []api.NetPair) []vivaldiRow {
	type acc struct {
		sum float64
		n   int
		est float64
		has bool
	}
	byPair := map[[2]string]*acc{}
	for _, p := range pairs {
		k := [2]string{p.From, p.To}
		if k[0] > k[1] {
			k[0], k[1] = k[1], k[0]
		}
		a := byPair[k]
		if a == nil {
			a = &acc{}
			byPair[k] = a
		}
		if p.RTTms != nil && *p.RTTms > 0 {
			a.sum += *p.RTTms
			a.n++
		}
		if p.RTTEstms != nil {
			a.est, a.has = *p.RTTEstms, true
		}
	}
	var out []vivaldiRow
	for k, a := range byPair {
		if a.n > 0 && a.has {
			out = append(out, vivaldiRow{A: k[0], B: k[1], Direct: a.sum / float64(a.n), Est: a.est})
		}
	}
	slices.SortFunc(out, func(x, y vivaldiRow) int { return strings.Compare(x.A+"\x00"+x.B, y.A+"\x00"+y.B) })
	return out
}

// medianRelErr is the median relative error over rows; ok is false for none.
func medianRelErr(rows []vivaldiRow) (float64, bool) {
	return medianOf(rows, vivaldiRow.RelErr)
}

// medianAbsErr is the median of |est - direct| in ms over rows.
func medianAbsErr(rows []vivaldiRow) float64 {
	m, _ := medianOf(rows, func(r vivaldiRow) float64 { return math.Abs(r.Est - r.Direct) })
	return m
}

func medianOf(rows []vivaldiRow, f func(vivaldiRow) float64) (float64, bool) {
	if len(rows) == 0 {
		return 0, false
	}
	errs := make([]float64, len(rows))
	for i, r := range rows {
		errs[i] = f(r)
	}
	slices.Sort(errs)
	n := len(errs)
	if n%2 == 1 {
		return errs[n/2], true
	}
	return (errs[n/2-1] + errs[n/2]) / 2, true
}

func writeVivaldiTable(w io.Writer, rows []vivaldiRow) {
	var out [][]string
	for _, r := range rows {
		out = append(out, []string{r.A + "-" + r.B, fmt.Sprintf("%.3f", r.Direct), fmt.Sprintf("%.3f", r.Est), fmt.Sprintf("%.2f", r.RelErr())})
	}
	table(w, "pair,direct rtt ms,estimate ms,rel error", out)
	if m, ok := medianRelErr(rows); ok {
		fmt.Fprintf(w, "median relative error over %d pairs: %.3f; median |est - direct| %.3f ms\n", len(rows), m, medianAbsErr(rows))
	}
}
