package netmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
)

// simCluster is a synthetic cluster for the planner simulation: switches
// of switchSize nodes, node names shuffled across switches (so names say
// nothing of the topology), 10 % of nodes on 100 Mbit/s ports and the
// rest on 1 Gbit/s, each switch's uplink 250, 400 or 600 Mbit/s for one
// flow (an oversubscribed uplink: on a non-blocking fabric a single flow
// across switches reads like one on a switch, and inference then merges
// the switches, harmlessly for the derived figures).
type simCluster struct {
	names  []string
	sw     map[string]string
	link   map[string]float64
	uplink map[string]float64
}

func newSimCluster(n, switchSize int, r *rand.Rand) simCluster {
	c := simCluster{sw: map[string]string{}, link: map[string]float64{}, uplink: map[string]float64{}}
	perm := r.Perm(n)
	for i := range n {
		name := fmt.Sprintf("node%04d", perm[i])
		s := fmt.Sprintf("sw%03d", i/switchSize)
		c.names = append(c.names, name)
		c.sw[name] = s
		c.link[name] = 1000
		if r.IntN(10) == 0 {
			c.link[name] = 100
		}
		if _, ok := c.uplink[s]; !ok {
			c.uplink[s] = []float64{250, 400, 600}[r.IntN(3)]
		}
	}
	slices.Sort(c.names)
	return c
}

// bw is what a bandwidth test reads between a and b.
func (c simCluster) bw(a, b string) float64 {
	w := min(c.link[a], c.link[b])
	if c.sw[a] != c.sw[b] {
		w = min(w, c.uplink[c.sw[a]], c.uplink[c.sw[b]])
	}
	return w
}

type simResult struct {
	nodes, switches       int
	testsPerCycle         float64 // mean over the second hour
	maxTestsPerNodeCycle  int
	rounds                int // most rounds of a cycle in the second hour
	maxMiBNodeHour        float64
	meanMiBNodeHour       float64
	inferredRight         int // cycles until the inferred grouping equals the truth (0: never in the run)
	groups, mixed         int // inferred switches at the end, and those mixing 1 Gbit/s nodes of two true switches
	derivedMedianRelErr   float64
	derivedUncertainShare float64
}

// simulate runs the leader's loop for cycles bandwidth cycles: infer the
// switches (or take them declared), build the model, plan with
// probeplan.PlanTopoCycle, and "run" every planned test against the synthetic
// truth with ±10 % noise. Bytes per node are counted over the second
// hour (cycles 13-24 at the default 5-minute interval), once the cold
// start is over.
func simulate(n, switchSize int, declared bool, cycles int, seed uint64) simResult {
	r := rand.New(rand.NewPCG(seed, 99))
	c := newSimCluster(n, switchSize, r)
	budget := probeplan.DefaultBudgetConfig()
	perHour := int(time.Hour / budget.CycleInterval)
	decl := map[string]string{}
	if declared {
		decl = c.sw
	}
	meas := map[probeplan.Pair]*Measurement{}
	last := map[probeplan.Pair]time.Time{}
	bytes := map[string]uint64{}
	res := simResult{nodes: n}
	for s := range c.uplink {
		_ = s
		res.switches++
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := 0
	var md *Model
	for cyc := 1; cyc <= cycles; cyc++ {
		now := t0.Add(time.Duration(cyc) * budget.CycleInterval)
		ms := make([]Measurement, 0, len(meas))
		for _, m := range meas {
			ms = append(ms, *m)
		}
		asg := Infer(c.names, decl, ms, DefaultConfig())
		if !declared && res.inferredRight == 0 && groupingMatches(c, asg) {
			res.inferredRight = cyc
		}
		md = Build(asg, ms, DefaultConfig())
		sw := map[string]string{}
		for _, nm := range c.names {
			sw[nm] = asg[nm].Name
		}
		plan := probeplan.PlanTopoCycle(probeplan.TopoInput{Members: c.names, Switch: sw, Last: last, Uncertain: md.Disagreements(),
			Cycle: uint64(cyc), Budget: budget, Now: now})
		second := cyc > perHour && cyc <= 2*perHour
		if second {
			res.rounds = max(res.rounds, len(plan.Rounds))
			res.maxTestsPerNodeCycle = max(res.maxTestsPerNodeCycle, plan.TestsPerNode)
		}
		for _, p := range plan.Pairs() {
			w := c.bw(p.A, p.B) * (0.9 + 0.2*r.Float64())
			m := meas[p]
			if m == nil {
				m = &Measurement{A: p.A, B: p.B}
				meas[p] = m
			}
			m.AvailMbps, m.PeakMbps, m.BWAt = w, max(m.PeakMbps, w), now.UnixMilli()
			last[p] = now
			if second {
				tests++
				bytes[p.A] += budget.TestBytes
				bytes[p.B] += budget.TestBytes
			}
		}
	}
	res.testsPerCycle = float64(tests) / float64(perHour)
	members := map[string]map[string]bool{}
	for _, nm := range c.names {
		g := md.Switch(nm).Name
		if g == "" {
			continue
		}
		if members[g] == nil {
			members[g] = map[string]bool{}
		}
		if c.link[nm] >= 1000 {
			members[g][c.sw[nm]] = true
		}
	}
	res.groups = len(members)
	for _, m := range members {
		if len(m) > 1 {
			res.mixed++
		}
	}
	var sum uint64
	for _, b := range bytes {
		sum += b
		res.maxMiBNodeHour = max(res.maxMiBNodeHour, float64(b)/(1<<20))
	}
	res.meanMiBNodeHour = float64(sum) / float64(n) / (1 << 20)
	// The derived figures against the truth, on up to 20,000 sampled pairs.
	var errs []float64
	uncertain, known := 0, 0
	for range min(20000, n*(n-1)/2) {
		a, b := c.names[r.IntN(n)], c.names[r.IntN(n)]
		if a == b || md.Measured(a, b) {
			continue
		}
		e := md.Pair(a, b)
		if !e.Known {
			continue
		}
		known++
		if e.Uncertain {
			uncertain++
		}
		truth := c.bw(a, b)
		errs = append(errs, math.Abs(e.PeakMbps-truth)/truth)
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		res.derivedMedianRelErr = errs[len(errs)/2]
		res.derivedUncertainShare = float64(uncertain) / float64(known)
	}
	return res
}

// groupingMatches reports whether the assignment groups the nodes with
// 1 Gbit/s ports exactly as the synthetic switches. A node on a
// 100 Mbit/s port is left out: every test it takes reads its own port,
// on its switch or across, so bandwidth cannot place it (it ends on a
// switch of its own, with correct derived figures).
func groupingMatches(c simCluster, asg Assignment) bool {
	fwd, back := map[string]string{}, map[string]string{}
	for _, n := range c.names {
		if c.link[n] < 1000 {
			continue
		}
		g := asg[n].Name
		if g == "" {
			return false
		}
		if f, ok := fwd[c.sw[n]]; ok && f != g {
			return false
		}
		if b, ok := back[g]; ok && b != c.sw[n] {
			return false
		}
		fwd[c.sw[n]], back[g] = g, c.sw[n]
	}
	return true
}

// TestSimulation_ProbeTraffic is the simulation behind the figures in
// docs/design/network-model.md: the topology planner on synthetic clusters of
// 16, 128 and 1,000 nodes (switches of 16), beside the all-pairs
// planner's figures (probeplan.TrafficPerHour). It checks that probe traffic
// per node is flat in n and within the budget. Print the table with
//
//	go test -run TestSimulation_ProbeTraffic -v ./netmodel/
func TestSimulation_ProbeTraffic(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation: 2 hours of cycles at 1,000 nodes")
	}
	budget := probeplan.DefaultBudgetConfig()
	budgetMiB := float64(budget.BytesPerHour) / (1 << 20)
	var b strings.Builder
	fmt.Fprintf(&b, "simulation (synthetic clusters, switches of 16, default budget %.0f MiB/node/h, 4 MiB tests, 5-min cycles; second hour)\n", budgetMiB)
	fmt.Fprintf(&b, "%6s %4s %9s | %11s %8s %6s %14s %15s %9s %12s %11s | %9s %9s %14s %13s\n",
		"nodes", "sw", "switches", "tests/cycle", "max/node", "rounds", "MiB/node/h max", "MiB/node/h mean", "exact@", "groups/mixed", "derived err",
		"old tests", "old /node", "old MiB/node/h", "old all pairs")
	var maxes []float64
	for _, n := range []int{16, 128, 1000} {
		for _, declared := range []bool{true, false} {
			res := simulate(n, 16, declared, 24, uint64(n))
			how := "declared"
			inf := "-"
			if !declared {
				how = "inferred"
				inf = "never"
				if res.inferredRight > 0 {
					inf = fmt.Sprintf("cycle %d", res.inferredRight)
				}
			}
			oldTests, oldPer, oldMiB, oldCover := "", "", "", ""
			if declared {
				tr := oldPlanner(n, budget)
				oldTests = fmt.Sprint(tr.TestsPerNode * n / 2)
				oldPer = fmt.Sprint(tr.TestsPerNode)
				oldMiB = fmt.Sprintf("%.0f", float64(tr.MaxBytesPerNodeHour)/(1<<20))
				oldCover = tr.CoverTime.String()
			}
			fmt.Fprintf(&b, "%6d %4d %9s | %11.0f %8d %6d %14.0f %15.0f %9s %12s %10.1f%% | %9s %9s %14s %13s\n",
				n, res.switches, how, res.testsPerCycle, res.maxTestsPerNodeCycle, res.rounds, res.maxMiBNodeHour, res.meanMiBNodeHour,
				inf, fmt.Sprintf("%d/%d", res.groups, res.mixed), 100*res.derivedMedianRelErr, oldTests, oldPer, oldMiB, oldCover)
			if res.maxMiBNodeHour > budgetMiB {
				t.Errorf("n=%d %s: %.0f MiB/node/h over the budget %.0f", n, how, res.maxMiBNodeHour, budgetMiB)
			}
			if declared {
				maxes = append(maxes, res.maxMiBNodeHour)
			}
		}
	}
	t.Log("\n" + b.String())
	// Flat in n: whatever n, no node exceeds the per-node caps
	// (TopoConfig.PerNode tests per cycle), far under the budget.
	bound := float64(probeplan.DefaultTopoConfig().PerNode()) * float64(budget.TestBytes) / (1 << 20) * float64(time.Hour/budget.CycleInterval)
	for i, m := range maxes {
		if m > bound {
			t.Errorf("size %d: busiest node %.0f MiB/h over the per-node bound %.0f", i, m, bound)
		}
	}
}

// oldPlanner is the all-pairs planner's traffic (probeplan.PlanCycle); above
// 200 nodes it is computed, not simulated: under the budget every node
// takes TestsPerCycle tests per cycle and the n(n-1)/2 pairs need
// n(n-1)/2 / (n*TestsPerCycle/2) cycles.
func oldPlanner(n int, cfg probeplan.BudgetConfig) probeplan.Traffic {
	if n <= 200 {
		return probeplan.TrafficPerHour(n, cfg)
	}
	per := min(cfg.TestsPerCycle(), n-1)
	cycles := int(math.Ceil(float64(n-1) / float64(per)))
	return probeplan.Traffic{Nodes: n, TestsPerNode: per, MaxBytesPerNodeHour: uint64(per) * cfg.TestBytes * uint64(time.Hour/cfg.CycleInterval),
		CyclesToCover: cycles, CoverTime: time.Duration(cycles) * cfg.CycleInterval}
}
