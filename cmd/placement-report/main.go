// Command placement-report measures the placement policies on generated
// clusters: for each cluster (3-4 switches, uneven port rates, uneven load,
// background traffic; seeded) it runs random, sequential, load, paper and
// netload, and the exhaustive oracle, and prints the objective T and the mean
// pairwise available bandwidth of each chosen group, with T's ratio to the
// oracle's. docs/design/placement.md keeps a copy of its output.
//
//	go run ./cmd/placement-report -clusters 40
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

var policies = []string{"random", "sequential", "load", "paper", "netload"}

type config struct {
	clusters int
	seed     int64
	sizes    []int
	procs    []int
	verbose  bool
}

func main() {
	c := config{sizes: []int{12, 16}, procs: []int{16, 32, 48}}
	flag.IntVar(&c.clusters, "clusters", 20, "generated clusters per (size, n) pair")
	flag.Int64Var(&c.seed, "seed", 1, "first seed")
	flag.BoolVar(&c.verbose, "v", false, "print every cluster")
	flag.Parse()
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "placement-report:", err)
		os.Exit(1)
	}
}

type tally struct {
	t, ratio, bw, load float64
	worst              float64
	within5            int
	count              int
}

func run(w io.Writer, c config) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "nodes\tn\tpolicy\tmean T\tT/oracle\tworst T/oracle\twithin 5%\tmean avail Mbps\tload/core\t")
	total := map[string]*tally{}
	for _, size := range c.sizes {
		for _, n := range c.procs {
			per := map[string]*tally{}
			var oracleT, oracleBW, oracleLoad float64
			for k := range c.clusters {
				seed := c.seed + int64(k)
				snap := synth.Cluster(synth.Config{Nodes: size, Switches: 3 + int(seed%2), Seed: seed})
				req := placement.DefaultRequest(n)
				req.Seed = seed
				req.Force = true // measure the search, not the overload guard
				od, err := placement.Oracle(snap, req)
				if err != nil {
					return fmt.Errorf("oracle, %d nodes, seed %d: %w", size, seed, err)
				}
				if c.verbose {
					fmt.Fprintf(w, "seed %d size %d n %d oracle T %.4f hosts %v\n", seed, size, n, od.Score.T, od.Hosts)
				}
				oracleT += od.Score.T
				oracleBW += od.Score.MeanAvailMbps
				oracleLoad += loadPerCore(snap, od.Hosts)
				for _, pol := range policies {
					req.Policy = pol
					d, err := placement.Place(snap, req)
					if err != nil {
						return fmt.Errorf("%s, %d nodes, seed %d: %w", pol, size, seed, err)
					}
					ratio := d.Score.T / od.Score.T
					for _, m := range []map[string]*tally{per, total} {
						t := m[pol]
						if t == nil {
							t = &tally{}
							m[pol] = t
						}
						t.t += d.Score.T
						t.ratio += ratio
						t.bw += d.Score.MeanAvailMbps
						t.load += loadPerCore(snap, d.Hosts)
						t.worst = max(t.worst, ratio)
						if ratio <= 1.05 {
							t.within5++
						}
						t.count++
					}
					if c.verbose {
						fmt.Fprintf(w, "seed %d size %d n %d %s T %.4f oracle %.4f hosts %v\n", seed, size, n, pol, d.Score.T, od.Score.T, d.Hosts)
					}
				}
			}
			k := float64(c.clusters)
			for _, pol := range policies {
				t := per[pol]
				fmt.Fprintf(tw, "%d\t%d\t%s\t%.4f\t%.3f\t%.3f\t%d/%d\t%.0f\t%.3f\t\n", size, n, pol,
					t.t/k, t.ratio/k, t.worst, t.within5, t.count, t.bw/k, t.load/k)
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%.4f\t%.3f\t%.3f\t%s\t%.0f\t%.3f\t\n", size, n, "oracle", oracleT/k, 1.0, 1.0, "-", oracleBW/k, oracleLoad/k)
		}
	}
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t")
	for _, pol := range policies {
		t := total[pol]
		fmt.Fprintf(tw, "all\tall\t%s\t%.4f\t%.3f\t%.3f\t%d/%d\t%.0f\t%.3f\t\n", pol,
			t.t/float64(t.count), t.ratio/float64(t.count), t.worst, t.within5, t.count, t.bw/float64(t.count), t.load/float64(t.count))
	}
	return tw.Flush()
}

// loadPerCore is the 1-minute load per logical core the job's processes
// find on their hosts, averaged over the processes: what the compute
// term weighs, reported apart from T as the bandwidth column is.
func loadPerCore(s placement.Snapshot, hosts []placement.Host) float64 {
	byName := make(map[string]*placement.Node, len(s.Nodes))
	for i := range s.Nodes {
		byName[s.Nodes[i].Name] = &s.Nodes[i]
	}
	sum, procs := 0.0, 0
	for _, h := range hosts {
		n := byName[h.Node]
		if n == nil || n.LogicalCores() == 0 {
			continue
		}
		sum += float64(h.NP) * n.Load.M1 / float64(n.LogicalCores())
		procs += h.NP
	}
	if procs == 0 {
		return 0
	}
	return sum / float64(procs)
}
