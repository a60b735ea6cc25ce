package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// times are the successful run times of policy, by repetition.
func times(recs []runRec, policy string) map[int]float64 {
	out := map[int]float64{}
	for _, r := range recs {
		if r.Policy == policy && r.Err == "" {
			out[r.Rep] = r.TimeS
		}
	}
	return out
}

func values(m map[int]float64) []float64 {
	var v []float64
	for _, x := range m {
		v = append(v, x)
	}
	slices.Sort(v)
	return v
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Sorted(slices.Values(v))
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func stddev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m, s := mean(v), 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

// gains are the per-repetition gains of pol over base, (t_base - t_pol) /
// t_base, over the repetitions where both ran: the seed's Tables 2-3 take
// average, median and maximum of these.
func gains(recs []runRec, pol, base string) []float64 {
	tp, tb := times(recs, pol), times(recs, base)
	var g []float64
	for rep, t := range tp {
		if b, ok := tb[rep]; ok && b > 0 {
			g = append(g, (b-t)/b)
		}
	}
	return g
}

func report(w io.Writer, c config, topo netns.Topology, recs []runRec, oracle, tOracle []string, took time.Duration) {
	ppn := "placement decides ranks per node"
	if c.ppn > 0 {
		ppn = fmt.Sprintf("%d per node", c.ppn)
	}
	fmt.Fprintf(w, "\n%s: %d nodes on %d switches, %d ranks (%s), halo %d iters x %d KiB, %d sweeps; %d repetitions, interleaved; took %v\n\n",
		topo.Name, len(topo.Nodes), len(topo.Switches), c.np, ppn, c.iters, c.haloKiB, c.sweeps, c.reps, took.Round(time.Second))
	oracleMean, oracleMedian := mean(values(times(recs, "oracle"))), median(values(times(recs, "oracle")))
	fmt.Fprintln(w, "| policy | runs | mean s | median s | CV | mean / oracle's | median / oracle's | typical group (min avail Mbit/s, switches, loaded) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, p := range c.policies {
		v := values(times(recs, p))
		fails := 0
		groups := map[string]int{}
		var desc string
		for _, r := range recs {
			if r.Policy != p {
				continue
			}
			if r.Err != "" {
				fails++
			}
			k := strings.Join(r.Hosts, ",")
			groups[k]++
			if groups[k] == maxCount(groups) {
				desc = fmt.Sprintf("%s (%.0f, %d, %d)", k, r.MinAvailMbps, r.Switches, r.Hogs)
			}
		}
		if len(groups) > 1 {
			desc += fmt.Sprintf(" +%d other groups", len(groups)-1)
		}
		runs := fmt.Sprint(len(v))
		if fails > 0 {
			runs += fmt.Sprintf(" (%d failed)", fails)
		}
		fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.2f | %.2f | %.2f | %s |\n", p, runs, mean(v), median(v), stddev(v)/mean(v), mean(v)/oracleMean, median(v)/oracleMedian, desc)
	}
	fmt.Fprintf(w, "\nGain = (t_baseline - t_policy) / t_baseline per repetition (seed 002 Tables 2-3):\n\n")
	fmt.Fprintln(w, "| policy | over | average gain | median gain | maximum gain | gain of means |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, p := range c.policies {
		if name, _, _ := parsePolicy(p); name != "paper" && name != "netload" {
			continue
		}
		for _, b := range []string{"random", "sequential", "load"} {
			if !slices.Contains(c.policies, b) {
				continue
			}
			g := gains(recs, p, b)
			if len(g) == 0 {
				continue
			}
			mb, mp := mean(values(times(recs, b))), mean(values(times(recs, p)))
			fmt.Fprintf(w, "| %s | %s | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", p, b, 100*mean(g), 100*median(g), 100*slices.Max(g), 100*(mb-mp)/mb)
		}
	}
	choices(w, c.policies, recs)
	fmt.Fprintf(w, "\noracle group (brute force over the configured rates: no hog nodes, fastest slowest pair): %s\n", strings.Join(oracle, ","))
	fmt.Fprintf(w, "t-oracle group (brute force: least T over a perfect snapshot): %s\n", strings.Join(tOracle, ","))
}

func maxCount(m map[string]int) int {
	best := 0
	for _, n := range m {
		best = max(best, n)
	}
	return best
}

// groupKey names a group by its ranks' hosts, sorted.
func groupKey(r runRec) string { return strings.Join(slices.Sorted(slices.Values(r.Hosts)), ",") }

// choices scores each policy by the groups it chose rather than by its own
// runs: every run counts the median time of its group over all runs of
// that group in the experiment, whichever policy ran it. One stalled run
// then weighs on a group's score only if it is the group's typical time.
// Groups run once keep that one time. It also counts how often a policy
// chose a group as good as the oracle's under the configured rates.
func choices(w io.Writer, policies []string, recs []runRec) {
	byGroup := map[string][]float64{}
	for _, r := range recs {
		if r.Err == "" {
			byGroup[groupKey(r)] = append(byGroup[groupKey(r)], r.TimeS)
		}
	}
	var best runRec
	for _, r := range recs {
		if r.Policy == "oracle" {
			best = r
		}
	}
	score := func(p string) (float64, int, int) {
		var v []float64
		good, n := 0, 0
		for _, r := range recs {
			if r.Policy != p || r.Err != "" {
				continue
			}
			n++
			v = append(v, median(byGroup[groupKey(r)]))
			if r.Hogs == 0 && r.MinAvailMbps >= best.MinAvailMbps {
				good++
			}
		}
		return mean(v), good, n
	}
	om, _, _ := score("oracle")
	fmt.Fprintf(w, "\nChoices: each run scored by its group's median time over every run of that group (%d groups):\n\n", len(byGroup))
	fmt.Fprintln(w, "| policy | mean of group medians s | / oracle's | groups as good as the oracle's (configured) |")
	fmt.Fprintln(w, "|---|---|---|---|")
	means := map[string]float64{}
	for _, p := range policies {
		m, good, n := score(p)
		means[p] = m
		fmt.Fprintf(w, "| %s | %.3f | %.2f | %d of %d |\n", p, m, m/om, good, n)
	}
	for _, p := range policies {
		if name, _, _ := parsePolicy(p); name != "paper" && name != "netload" {
			continue
		}
		var parts []string
		for _, b := range []string{"random", "sequential", "load"} {
			if mb, ok := means[b]; ok {
				parts = append(parts, fmt.Sprintf("%.1f%% over %s", 100*(mb-means[p])/mb, b))
			}
		}
		fmt.Fprintf(w, "%s: %s\n", p, strings.Join(parts, ", "))
	}
}
