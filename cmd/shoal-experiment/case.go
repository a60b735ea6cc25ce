package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

// caseRun is one testbed case: its own cluster, brought up, measured and
// torn down.
type caseRun struct {
	c     config
	topo  netns.Topology
	shoal string
	work  string
	apps  []app
	say   func(format string, args ...any)
	seed  uint64

	l     *lab.Lab
	asker string
	rsh   string
	// Per phase (scheduled changes applied): the configured model and
	// the oracles' groups under it.
	models []*model
	// np is the ranks of the job being placed: -np, or the case's job
	// size of the repetition (Topology.JobSizes).
	np int
	// oracles and tOracles cache each phase's oracle groups per job size.
	oracles, tOracles map[phaseSize][]string
	// lastRun is when the latest MPI run ended (settle), lastPolicy
	// and lastHosts whose run it was (explain).
	lastRun    time.Time
	lastPolicy string
	lastHosts  []string
	// peers is Slurm beside shoal, when a Slurm policy is asked.
	peers *peers
	// loads are the host's 1-minute load averages at every run's end.
	loads []float64
}

// run brings the case up and runs, in order:
//
//  1. the cold start. The cluster counts as formed when every agent's
//     `shoal members` lists every node alive and every agent names the
//     same raft leader (lab.WaitFormed). At that moment, before anything
//     else, every policy is asked once for a placement (`shoal alloc`, of
//     the same non-leader agent), with whatever the probes have measured
//     by then; each of these first groups then runs each program
//     -cold-reps times, interleaved.
//  2. a wait for the first full bandwidth cycle (what is left of -bw-wait
//     after formation);
//  3. the steady-state repetitions: every policy asked anew, each group
//     running each program, in a fresh random order per repetition. A
//     scheduled link change (topology "changes", at_s seconds after the
//     first steady-state repetition starts) is applied at the first run
//     boundary at or after its time, logged, and the runs after it
//     count in the next phase, with the oracles recomputed for it. Each
//     run of such a phase records whether it was placed before or after
//     the first re-test of the changed node (retest.go), and the first
//     re-test is logged.
func (cs *caseRun) run(ctx context.Context, out io.Writer) ([]runRec, error) {
	c := cs.c
	if err := os.MkdirAll(cs.work, 0o755); err != nil {
		return nil, err
	}
	logLevel := slog.LevelWarn
	if c.verbose {
		logLevel = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))
	cs.say("case %s: bringing up %d nodes, %d switches, %d flows, %d hog nodes, %d scheduled link changes",
		cs.topo.Name, len(cs.topo.Nodes), len(cs.topo.Switches), len(cs.topo.Flows), len(cs.topo.Hogs), len(cs.topo.Changes))
	l, err := lab.Up(ctx, cs.topo, lab.Options{
		Shoal: cs.shoal, Dir: filepath.Join(cs.work, "lab"), Logger: log,
		AgentArgs: c.agentArgs, EmulateLoad: true, ConfineHogs: c.confine,
	})
	if err != nil {
		return nil, err
	}
	cs.l = l
	defer func() {
		if err := l.Close(); err != nil {
			cs.say("teardown: %v", err)
		}
	}()
	upAt := time.Now()
	leader, err := l.WaitFormed(ctx, c.formTimeout)
	if err != nil {
		return nil, err
	}
	formed := time.Now()
	nodes := l.Nodes()
	cs.asker = nodes[len(nodes)-1]
	if cs.asker == leader {
		cs.asker = nodes[len(nodes)-2]
	}
	for k := 0; k <= len(cs.topo.Changes); k++ {
		if err := cs.addPhase(k); err != nil {
			return nil, err
		}
	}
	if cs.rsh, err = l.LauncherScript(); err != nil {
		return nil, err
	}
	cs.say("case %s: formed %.1fs after the agents started (all %d alive in every agent's members, one leader %s); placement asked of %s",
		cs.topo.Name, formed.Sub(upAt).Seconds(), len(nodes), leader, cs.asker)
	cs.say("oracle group (configured rates, no hog nodes, fastest slowest pair): %v; t-oracle (least T on a perfect snapshot): %v",
		cs.oracle(0), cs.tOracles[phaseSize{0, cs.np}])
	if c.usesSlurm() {
		if err := cs.startSlurm(ctx); err != nil {
			return nil, err
		}
		defer func() {
			if err := cs.peers.sl.Close(); err != nil {
				cs.say("slurm teardown: %v", err)
			}
		}()
	}

	var recs []runRec
	rng := rand.New(rand.NewPCG(cs.seed, 0xe4))
	if c.coldReps > 0 {
		cold, err := cs.coldStart(ctx, out, formed, rng)
		recs = append(recs, cold...)
		if err != nil {
			return recs, err
		}
	}
	full := len(nodes) * (len(nodes) - 1) / 2
	left := max(c.bwWait-time.Since(formed), time.Second)
	if err := l.WaitBandwidthCycle(ctx, cs.asker, full, left); err != nil {
		n, _, _ := l.MeasuredPairs(ctx, cs.asker)
		cs.say("bandwidth: %d of %d pairs measured %.0fs after formation; running anyway", n, full, time.Since(formed).Seconds())
	} else {
		cs.say("bandwidth: all %d pairs measured %.0fs after formation", full, time.Since(formed).Seconds())
	}
	if net, err := l.Shoal(ctx, cs.asker, "net", "--color", "never"); err == nil {
		fmt.Fprintf(out, "# case %s: shoal net (Mbit/s) as %s sees it before the steady-state runs\n\n%s\n", cs.topo.Name, cs.asker, net)
	}
	if slices.Contains(c.policies, polSlurmMeasured) {
		if err := cs.exportMeasured(ctx); err != nil {
			return recs, err
		}
	}
	steady, err := cs.steady(ctx, rng)
	recs = append(recs, steady...)
	if err != nil || cs.peers == nil {
		return recs, err
	}
	return recs, cs.overheads(ctx, rng)
}

// phaseSize keys the oracles: a phase and a job size.
type phaseSize struct{ phase, np int }

// addPhase computes the model with the first k changes, and its oracles
// for the current job size.
func (cs *caseRun) addPhase(k int) error {
	cs.models = append(cs.models, newModelAt(cs.topo, k))
	return cs.addOracles(k)
}

// addOracles computes phase k's oracle groups for the current job size,
// once.
func (cs *caseRun) addOracles(k int) error {
	key := phaseSize{k, cs.np}
	if _, ok := cs.oracles[key]; ok {
		return nil
	}
	if cs.oracles == nil {
		cs.oracles, cs.tOracles = map[phaseSize][]string{}, map[phaseSize][]string{}
	}
	m := cs.models[k]
	o, err := m.oracle(cs.np)
	if err != nil {
		return err
	}
	to, _, err := m.tOracle(cs.np, cs.c.ppn)
	if err != nil {
		return err
	}
	cs.oracles[key], cs.tOracles[key] = o, to
	return nil
}

// oracle is phase k's oracle group for the current job size.
func (cs *caseRun) oracle(k int) []string { return cs.oracles[phaseSize{k, cs.np}] }

// caseName is the case as runs record it: with the job size when the
// case queues several.
func (cs *caseRun) caseName() string {
	if len(cs.topo.JobSizes) == 0 {
		return cs.topo.Name
	}
	return fmt.Sprintf("%s/np%d", cs.topo.Name, cs.np)
}

// coldStart asks every policy for its first placement at once, then runs
// those groups.
func (cs *caseRun) coldStart(ctx context.Context, out io.Writer, formed time.Time, rng *rand.Rand) ([]runRec, error) {
	c := cs.c
	// Slurm's policies read no measurement and are asked in the steady
	// state only: a cold start is shoal's.
	var policies []string
	for _, p := range c.policies {
		if !isSlurmPolicy(p) {
			policies = append(policies, p)
		}
	}
	c.policies = policies
	first := map[string][]string{}
	modelT := map[string]float64{}
	took := map[string]float64{}
	full := len(cs.topo.Nodes) * (len(cs.topo.Nodes) - 1) / 2
	for _, pol := range c.policies {
		asked := time.Since(formed)
		t0 := time.Now()
		hosts, t, cov, err := cs.hostsCov(ctx, pol, 0, int64(cs.seed)*1000)
		if err != nil {
			return nil, fmt.Errorf("cold start: %w", err)
		}
		first[pol], modelT[pol], took[pol] = hosts, t, time.Since(t0).Seconds()
		n, _, err := cs.l.MeasuredPairs(ctx, cs.asker)
		if err != nil {
			return nil, fmt.Errorf("cold start: %w", err)
		}
		if cov != "" {
			cov = ", network model: " + cov
		}
		cs.say("cold start: %-14s asked %.1fs after formation, answered in %.1fs (%d of %d pairs' bandwidth measured then%s)",
			pol, asked.Seconds(), took[pol], n, full, cov)
	}
	if net, err := cs.l.Shoal(ctx, cs.asker, "net", "--color", "never"); err == nil {
		fmt.Fprintf(out, "# case %s: shoal net (Mbit/s) as %s sees it right after the cold-start placements\n\n%s\n", cs.topo.Name, cs.asker, net)
	}
	// The RTTs too: NL weighs them (w_lt), and on this host they are
	// scheduler noise around a few hundredths of a millisecond.
	if lat, err := cs.l.Shoal(ctx, cs.asker, "net", "--metric", "lat", "--color", "never"); err == nil {
		fmt.Fprintf(out, "# case %s: shoal net --metric lat (ms) as %s sees it then\n\n%s\n", cs.topo.Name, cs.asker, lat)
	}
	for _, pol := range c.policies {
		mn, sw, hg := cs.models[0].groupStats(first[pol])
		cs.say("cold start: %-14s -> %s (slowest pair %.0f Mbit/s, %d switches, %d hog nodes)", pol, strings.Join(first[pol], ","), mn, sw, hg)
	}
	// random reads no measurement, so asking it again now is what asking
	// it at formation would have been: each cold-start run of random gets
	// a draw of its own, and random's cold-start mean is over cold-reps
	// groups instead of one group's luck (the first draw is the one above).
	// Seeds apart from the steady state's (seed*1000+rep there), so that
	// a draw here is not the steady repetition's group again.
	draws := map[int][]string{1: first["random"]}
	drawT := map[int]float64{1: modelT["random"]}
	if slices.Contains(c.policies, "random") {
		for rep := 2; rep <= c.coldReps; rep++ {
			hosts, t, _, err := cs.hostsCov(ctx, "random", 0, int64(cs.seed)*1000+500+int64(rep))
			if err != nil {
				return nil, fmt.Errorf("cold start: random, draw %d: %w", rep, err)
			}
			draws[rep], drawT[rep] = hosts, t
			mn, sw, hg := cs.models[0].groupStats(hosts)
			cs.say("cold start: %-14s -> %s (slowest pair %.0f Mbit/s, %d switches, %d hog nodes)", fmt.Sprintf("random #%d", rep), strings.Join(hosts, ","), mn, sw, hg)
		}
	}
	var recs []runRec
	for rep := 1; rep <= c.coldReps; rep++ {
		order := shuffled(rng, c.policies)
		for i, pol := range order {
			hosts, t := first[pol], modelT[pol]
			if pol == "random" {
				hosts, t = draws[rep], drawT[rep]
			}
			for _, a := range shuffledApps(rng, cs.apps) {
				r := runRec{Rep: rep, Order: i + 1, Policy: pol, Hosts: hosts, ModelT: t, Case: cs.caseName(), Kind: "cold", App: a.name,
					AllocS: took[pol]}
				if err := cs.runOne(ctx, a, &r, c.coldReps); err != nil {
					return recs, err
				}
				recs = append(recs, r)
			}
		}
	}
	return recs, nil
}

// steady runs the repetitions, applying scheduled link changes on time.
func (cs *caseRun) steady(ctx context.Context, rng *rand.Rand) ([]runRec, error) {
	c := cs.c
	var recs []runRec
	start := time.Now()
	since := func() float64 { return time.Since(start).Seconds() }
	phase := 0
	// watches[k-1] follows the asking agent's view of change k's node:
	// phase k's runs are split at its first re-test.
	var watches []*retestWatch
	defer func() {
		for k, w := range watches {
			if !w.seen() {
				last := "never polled"
				if !math.IsInf(w.lastMissS, -1) {
					last = fmt.Sprintf("last polled at +%.1fs after the change", w.lastMissS-w.changedS)
				}
				cs.say("no re-test of %s (change %d) in %s's view (%s): no phase-%d run was placed after one",
					w.node, k+1, cs.asker, last, k+1)
			}
		}
	}()
	for rep := 1; rep <= c.reps; rep++ {
		if sizes := cs.topo.JobSizes; len(sizes) > 0 {
			// A queue of jobs of different sizes, back to back: each
			// repetition's jobs take the next size.
			cs.np = sizes[(rep-1)%len(sizes)]
			if err := cs.addOracles(phase); err != nil {
				return recs, err
			}
			cs.say("repetition %d: jobs of %d ranks; oracle %v", rep, cs.np, cs.oracle(phase))
		}
		for i, pol := range shuffled(rng, c.policies) {
			if ctx.Err() != nil {
				return recs, ctx.Err()
			}
			for phase < len(cs.topo.Changes) && time.Since(start).Seconds() >= cs.topo.Changes[phase].AtS*c.changeScale {
				ch := cs.topo.Changes[phase]
				before := cs.models[phase]
				if err := cs.l.TB.SetNodeRates(ctx, ch.Node, ch.Mbit, ch.In()); err != nil {
					return recs, fmt.Errorf("scheduled change %d: %w", phase+1, err)
				}
				if err := cs.addOracles(phase + 1); err != nil {
					return recs, err
				}
				watches = append(watches, newRetestWatch(ch.Node, time.Now(), since()))
				cs.say("CHANGE %d: %s's link %d out / %d in -> %d out / %d in Mbit/s at +%.1fs of the steady-state runs (scheduled +%.0fs); oracle now %v",
					phase+1, ch.Node, before.out[ch.Node], before.in[ch.Node], ch.Mbit, ch.In(), time.Since(start).Seconds(), ch.AtS*c.changeScale, cs.oracle(phase+1))
				phase++
			}
			cs.settle(ctx, pol)
			var w *retestWatch
			if phase > 0 {
				w = watches[phase-1]
			}
			// The view is polled right before and right after the
			// placement, every policy's (the oracles' too: their runs
			// are split by the same moment), until it holds a re-test.
			cs.pollRetest(ctx, w, since)
			askedS := since()
			hosts, t, err := cs.hostsFor(ctx, pol, phase, int64(cs.seed)*1000+int64(rep))
			if err != nil {
				return recs, err
			}
			answeredS := since()
			cs.pollRetest(ctx, w, since)
			side := ""
			if w != nil {
				side = retestSide(askedS, answeredS, w.lastMissS, w.seenS)
			}
			for _, a := range shuffledApps(rng, cs.apps) {
				r := runRec{Rep: rep, Order: i + 1, Policy: pol, Hosts: hosts, ModelT: t, Case: cs.caseName(), Kind: "steady", Phase: phase, App: a.name,
					PlacedS: askedS, Retest: side}
				if err := cs.runOne(ctx, a, &r, c.reps); err != nil {
					return recs, err
				}
				recs = append(recs, r)
			}
			if err := cs.releaseSlurm(ctx); err != nil {
				return recs, err
			}
		}
	}
	return recs, nil
}

// pollRetest asks the asking agent's view once, while w has not seen a
// re-test of its node, and logs the first that it holds. A failed poll is
// logged and tells nothing: the runs it would have decided stay unknown.
func (cs *caseRun) pollRetest(ctx context.Context, w *retestWatch, since func() float64) {
	if w == nil || w.seen() {
		return
	}
	sent := since()
	ps, err := cs.l.Net(ctx, cs.asker)
	if err != nil {
		cs.say("re-test watch of %s: %v", w.node, err)
		return
	}
	if !w.observe(ps, sent, since()) {
		return
	}
	bw := "?"
	if w.pair.BWMbps != nil {
		bw = fmt.Sprintf("%.1f", *w.pair.BWMbps)
	}
	// The view is polled only around placements: it took the figure
	// between the last poll without it and this one.
	notYet := ""
	if !math.IsInf(w.lastMissS, -1) {
		notYet = fmt.Sprintf(", not yet at +%.1fs", w.lastMissS-w.changedS)
	}
	cs.say("first re-test of %s at +%.1fs after the change: pair %s-%s (%s Mbit/s, the slower direction; in %s's view by +%.1fs%s)",
		w.node, w.pair.MeasuredAt.Sub(w.changedAt).Seconds(), w.node, w.retestPeer(), bw, cs.asker, w.seenS-w.changedS, notYet)
}

// hostsFor is policy's group: the oracles' from the model of the phase,
// shoal's asked of the asker agent.
func (cs *caseRun) hostsFor(ctx context.Context, pol string, phase int, seed int64) ([]string, float64, error) {
	hosts, t, _, err := cs.hostsCov(ctx, pol, phase, seed)
	return hosts, t, err
}

// hostsCov is hostsFor with the network model's coverage shoal reported.
func (cs *caseRun) hostsCov(ctx context.Context, pol string, phase int, seed int64) ([]string, float64, string, error) {
	switch pol {
	case polSlurm, polSlurmTree, polSlurmMeasured:
		hosts, err := cs.slurmHosts(ctx, pol)
		return hosts, 0, "", err
	case "oracle":
		return cs.oracle(phase), 0, "", nil
	case "t-oracle":
		return cs.tOracles[phaseSize{phase, cs.np}], 0, "", nil
	}
	asked := time.Now()
	hosts, d, err := allocCov(ctx, cs.l, cs.asker, pol, cs.np, cs.c.ppn, seed, "")
	if err != nil {
		return nil, 0, "", err
	}
	if name, _, _ := parsePolicy(pol); name == "netload" {
		cs.explain(ctx, pol, phase, seed, hosts, d.Score, asked)
	}
	return hosts, d.Score.T, d.ModelCoverage, nil
}

// explain logs, when a netload policy chose a group unlike the oracle's
// (a slower slowest pair), how shoal scored the oracle's group on the
// same view: the same policy asked with --hostfile of the oracle's nodes.
// It tells a placement shoal's figures call worse (its measurements are
// wrong) from one its search missed (a T lower than its own choice's).
func (cs *caseRun) explain(ctx context.Context, pol string, phase int, seed int64, hosts []string, own api.AllocScore, asked time.Time) {
	m := cs.models[phase]
	mine, _, _ := m.groupStats(hosts)
	best, _, _ := m.groupStats(cs.oracle(phase))
	if mine >= best {
		return
	}
	hf := filepath.Join(cs.work, "hosts-oracle-explain")
	var b strings.Builder
	for _, h := range cs.oracle(phase) {
		fmt.Fprintln(&b, h)
	}
	if err := os.WriteFile(hf, []byte(b.String()), 0o644); err != nil {
		cs.say("explain: %v", err)
		return
	}
	_, d, err := allocCov(ctx, cs.l, cs.asker, pol, cs.np, cs.c.ppn, seed, hf)
	if err != nil {
		cs.say("explain: %v", err)
		return
	}
	o := d.Score
	// Candidates are the greedy starts, one per node with a free slot: a
	// count short of the cluster says a node was not eligible then (a T
	// lower than the choice's on the same view is otherwise a search miss).
	cs.say("explain: %s chose %s (slowest pair %.0f Mbit/s) at T %.4f from %d candidates (c_norm %.4f, n_norm %.4f, mean avail %.1f Mbit/s, cl %s); "+
		"the oracle's %s (%.0f) scores T %.4f (c_norm %.4f, n_norm %.4f, mean avail %.1f Mbit/s, cl %s) on the same view",
		pol, strings.Join(hosts, ","), mine, own.T, own.Candidates, own.CNorm, own.NNorm, own.MeanAvailMbps, nodeCLs(own),
		strings.Join(cs.oracle(phase), ","), best, o.T, o.CNorm, o.NNorm, o.MeanAvailMbps, nodeCLs(o))
	cs.say("explain: pairs of %s's choice: %s", pol, pairOffers(own))
	cs.say("explain: pairs of the oracle's group: %s", pairOffers(o))
	cs.say("explain: %s", cs.predecessor(cs.oracle(phase), asked))
}

// predecessor says how long before the placement was asked the run
// before it ended, and which of group's nodes it held: its traffic and
// load stand in the samples the placement read until a sample taken after
// its end reaches the asker (the agents' traffic watch publishes a stop
// within about a second).
func (cs *caseRun) predecessor(group []string, asked time.Time) string {
	if cs.lastRun.IsZero() {
		return "no run before this placement"
	}
	var shared []string
	for _, h := range cs.lastHosts {
		if slices.Contains(group, h) && !slices.Contains(shared, h) {
			shared = append(shared, h)
		}
	}
	held := "none of the oracle's nodes"
	if len(shared) > 0 {
		held = "the oracle's " + strings.Join(shared, ",")
	}
	return fmt.Sprintf("the previous run (%s on %s) ended %.2fs before the placement was asked, on %s",
		cs.lastPolicy, strings.Join(cs.lastHosts, ","), asked.Sub(cs.lastRun).Seconds(), held)
}

// pairOffers lists a score's pairs, a-b=offer Mbit/s (cost), "?" for an
// unmeasured pair.
func pairOffers(s api.AllocScore) string {
	var parts []string
	for _, p := range s.PairScores {
		offer := "?"
		if p.Measured {
			offer = fmt.Sprintf("%.0f", p.OfferMbps)
		}
		parts = append(parts, fmt.Sprintf("%s-%s=%s(%.2f)", p.A, p.B, offer, p.Cost))
	}
	return strings.Join(parts, " ")
}

// nodeCLs lists a score's compute load per node, node=CL.
func nodeCLs(s api.AllocScore) string {
	var parts []string
	for _, n := range s.Nodes {
		parts = append(parts, fmt.Sprintf("%s=%.4f", n.Node, n.CL))
	}
	return strings.Join(parts, " ")
}

// settle waits, before a policy shoal answers is asked in the steady
// state, until the asking agent's view holds for every alive node a state
// sample whose interval began after the previous MPI run ended: a sample
// stamped (sampled_at, the end of its interval) at least -settle, the
// agents' sample interval, and a second of slack for a late tick after
// the run, at most -settle + 30 s.
//
// Why: the runs follow each other within a second, and the latest traffic
// sample (NetTxBytesPerSec, NetRxBytesPerSec: what placement takes off each
// direction of a link now) still held the previous policy's job, the group
// that had just run looked busy, and netload alone was asked about a cluster
// with a job on it that had already ended; the other policies read no
// traffic. On asym10 the oracle's group then offered 35-54 Mbit/s on average
// in netload's view instead of 64 (the explain lines of a diagnostic run,
// docs/design/experiment.md). On a real cluster the next job
// does not start in the same second on the nodes one just left; the
// background flows of a case, which are meant to be seen, run throughout and
// are in every sample. The 1-, 5- and 15-minute means of the node-flow term
// still hold the earlier runs: waiting those out is not practical, and they
// weigh little (docs/design/experiment.md).
func (cs *caseRun) settle(ctx context.Context, pol string) {
	if cs.c.settle <= 0 || cs.lastRun.IsZero() || pol == "oracle" || pol == "t-oracle" {
		return
	}
	since := cs.lastRun.Add(cs.c.settle + time.Second)
	err := lab.WaitFor(ctx, cs.c.settle+30*time.Second, "every node's state sampled after the last run", func(ctx context.Context) error {
		var nodes []api.Node
		if err := cs.l.JSON(ctx, cs.asker, &nodes, "nodes"); err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Status == "alive" && n.Sampled.Before(since) {
				return fmt.Errorf("%s's latest sample is from %s, the last run ended at %s",
					n.Name, n.Sampled.Format("15:04:05.000"), cs.lastRun.Format("15:04:05.000"))
			}
		}
		return nil
	})
	if err != nil {
		cs.say("settle: %v; asking anyway", err)
	}
}

// runOne runs program a on r.Hosts and logs the result.
func (cs *caseRun) runOne(ctx context.Context, a app, r *runRec, reps int) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.MinAvailMbps, r.Switches, r.Hogs = cs.models[r.Phase].groupStats(r.Hosts)
	before, berr := cs.l.TB.Counters(ctx, r.Hosts...)
	runMPI(ctx, cs.l, cs.rsh, a, cs.c, cs.work, r)
	cs.lastRun, cs.lastPolicy, cs.lastHosts = time.Now(), r.Policy, r.Hosts
	if v, err := strconv.ParseFloat(loadAvg(), 64); err == nil {
		cs.loads = append(cs.loads, v)
	}
	after, aerr := cs.l.TB.Counters(ctx, r.Hosts...)
	status := fmt.Sprintf("%.3fs (comm %.3fs)", r.TimeS, r.CommS)
	if berr == nil && aerr == nil {
		r.Net = after.Sub(before)
		status += fmt.Sprintf(" tcp %d RTOs %d retrans %d TLPs, %d tbf drops", r.Net.Timeouts, r.Net.Retrans, r.Net.LossProbes, r.Net.Drops)
	}
	if r.Err != "" {
		status = "FAILED: " + r.Err
	}
	phase := fmt.Sprint(r.Phase)
	if r.Kind == "steady" && r.Phase > 0 {
		side := r.Retest
		if side == "" {
			side = "unknown"
		}
		phase += fmt.Sprintf(" (%s re-test)", side)
	}
	cs.say("%s %s %d/%d phase %s %-14s %-6s on %-15s -> %s", cs.topo.Name, r.Kind, r.Rep, reps, phase, r.Policy, r.App, strings.Join(r.Hosts, ","), status)
	return nil
}

func shuffled(rng *rand.Rand, in []string) []string {
	out := append([]string(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func shuffledApps(rng *rand.Rand, in []app) []app {
	out := append([]app(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
