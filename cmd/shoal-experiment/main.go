// Command shoal-experiment reproduces seed 002 §5 on the network-namespace
// testbed, on several testbed cases (testbed/*.json: lab12, a saturating
// bulk flow inside a switch, asymmetric links, a link that degrades
// mid-run): the same MPI programs (examples/mpi/halo.c and Debian's
// LAMMPS LJ melt, Open MPI over TCP by default) on the nodes chosen by
// random, sequential, load-aware, paper and netload placement (asked of
// a running shoal cluster with `shoal alloc`, also with other alpha and
// attribute weights), by a brute-force oracle over the configured link
// rates and by a brute-force minimiser of shoal's T over a perfect
// snapshot. Per case it reports the cold start (every policy's first
// placement, asked the moment the cluster has formed) apart from the
// steady-state repetitions (policies interleaved in a fresh random order
// each), per program and, where the case changes a link mid-run, per
// phase. Every run goes to a CSV. Needs root.
//
// With the policies slurm, slurm-tree and slurm-measured it also runs
// Debian's Slurm on the same testbed (testcluster/slurm) and, in the same
// steady-state repetitions, lets Slurm place the same program: by default,
// with topology/tree from the cabling, and with topology/tree from `shoal
// export slurm-topology`; then it compares launch overhead and array
// throughput with Slurm's (peers.go). make bench-peers runs that.
//
//	go build -o bin/shoal ./cmd/shoal && go run ./cmd/shoal-experiment -cases bulk10 -reps 3
//
// docs/design/experiment.md describes the setup and the results.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/deadline"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

type config struct {
	cases                  []string
	testbed                string
	shoal, halo, out       string
	reps, np, ppn          int
	coldReps               int
	iters, haloKiB, sweeps int
	lmp                    string
	lammpsSteps            int
	apps                   []string
	confine                int
	rankSessions           bool
	mpi                    string
	bwWait, runTimeout     time.Duration
	formTimeout            time.Duration
	settle                 time.Duration
	peerReps, arrayTasks   int
	poll                   time.Duration
	changeScale            float64
	policies               []string
	seed                   uint64
	agentArgs              []string
	verbose                bool
	keep                   string
}

// defaultCases are the testbed cases a plain run covers, in order.
const defaultCases = "lab12,bulk10,asym10,degrade10"

func main() {
	var c config
	var cases, topo, policies, agentArgs, apps string
	flag.StringVar(&cases, "cases", defaultCases, "testbed `CASES` to run, comma-separated: names of DIR/NAME.json (see -testbed) or .json files")
	flag.StringVar(&topo, "topo", "", "topology `FILE`: one case (same as -cases FILE)")
	flag.StringVar(&c.testbed, "testbed", "testbed", "`DIR` holding the cases' topologies")
	flag.StringVar(&c.shoal, "shoal", "bin/shoal", "shoal `BINARY`")
	flag.StringVar(&apps, "apps", "halo,lammps", "MPI `PROGRAMS` run on every group: halo (examples/mpi/halo.c), lammps (Debian's lmp, LJ melt)")
	flag.StringVar(&c.halo, "halo", "examples/mpi/halo.c", "halo program: a .c file (built with mpicc.FLAVOUR) or an executable")
	flag.StringVar(&c.lmp, "lammps", "lmp", "LAMMPS `BINARY` (Debian's lammps package, Open MPI)")
	flag.IntVar(&c.lammpsSteps, "lammps-steps", 100, "LJ melt time steps (4000 atoms)")
	flag.StringVar(&c.out, "out", "experiment.csv", "CSV `FILE` of every run (rewritten after every case)")
	flag.IntVar(&c.reps, "reps", 5, "steady-state repetitions per case (each runs every policy once per program)")
	flag.IntVar(&c.coldReps, "cold-reps", 2, "runs of each policy's cold-start group per program (0: no cold start)")
	flag.IntVar(&c.np, "np", 4, "MPI ranks (the machine has 2 cores: keep it small)")
	flag.IntVar(&c.ppn, "ppn", 0, "ranks per node asked of shoal alloc (0: placement decides from each node's free cores)")
	flag.IntVar(&c.iters, "iters", 15, "halo iterations")
	flag.IntVar(&c.haloKiB, "halo-kib", 256, "halo size in KiB per neighbour and direction")
	flag.IntVar(&c.sweeps, "sweeps", 4, "relaxation sweeps per iteration (compute)")
	flag.BoolVar(&c.rankSessions, "rank-sessions", defaultRankSessions, "start every MPI rank in a session of its own (setsid), so that each is one autogroup of the kernel's scheduler, the head node's rank too (docs/design/experiment.md, \"Run-to-run noise\"); false: as mpirun starts them")
	flag.StringVar(&c.mpi, "mpi", "openmpi", "MPI `FLAVOUR`: openmpi (TCP BTL, yields when idle) or mpich (ch4:ucx, UCX_TLS=tcp, busy-polls; halo only)")
	flag.IntVar(&c.confine, "hog-quota", 30, "CPU quota, percent of one core, of each loaded node (its hogs and ranks); 0: hogs as netns starts them")
	flag.DurationVar(&c.bwWait, "bw-wait", 150*time.Second, "how long after formation to wait for one full bandwidth cycle before the steady-state runs (the cold-start runs count)")
	flag.DurationVar(&c.formTimeout, "form-timeout", 3*time.Minute, "how long to wait for the cluster to form")
	flag.DurationVar(&c.runTimeout, "run-timeout", 3*time.Minute, "longest one MPI run may take")
	flag.StringVar(&policies, "policies", "random,sequential,load,paper,netload,netload@0.1,netload/flow=0,t-oracle,oracle",
		"policies to compare: shoal's (random, sequential, load, paper, netload; NAME@A/W asks with --alpha A --weight W), t-oracle, oracle, and Slurm's on the same testbed: slurm (default placement), slurm-tree (topology/tree, topology.conf from the cabling), slurm-measured (topology/tree from shoal export slurm-topology); Slurm's need -ppn")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the run order and of the random and sequential policies")
	flag.StringVar(&agentArgs, "agent-args", "--bandwidth-bytes 1MiB --bandwidth-interval 5m --latency-interval 10s --placement-model-wait 45s", "extra `FLAGS` for every shoal agent")
	flag.DurationVar(&c.settle, "settle", 0, "a diagnosis aid, off by default (jobs follow each other at once, as in a queue): before a steady-state policy is asked, wait until every alive node's latest state sample covers only time after the previous MPI run ended: this long (the agents' --sample-interval, 3s) and 1s of slack after it")
	flag.IntVar(&c.peerReps, "peer-reps", 3, "with Slurm policies: repetitions of the launch and throughput comparison against Slurm after the steady state (0: none)")
	flag.IntVar(&c.arrayTasks, "array-tasks", 100, "tasks of /bin/true in the throughput comparison's array")
	flag.DurationVar(&c.poll, "poll", time.Second, "how often the throughput comparison asks squeue and shoal jobs whether the array is done, as a user would")
	flag.BoolVar(&c.verbose, "v", false, "log the testbed's and the lab's progress")
	flag.StringVar(&c.keep, "keep", "", "work in `DIR` (created, must not exist) and keep it: every agent's log (DIR/caseN/lab/logs/NODE-*-shoal.log), the hostfiles and the programs built; empty: a temporary directory removed at the end")
	flag.Float64Var(&c.changeScale, "change-scale", 1, "multiply the times of the topologies' scheduled link changes (at_s) by `F`: with fewer policies a repetition is shorter, and more of them then run before a change")
	fromLog := flag.String("csv-from-log", "", "rebuild the CSV (-out) of a run cut short from its progress `LOG` (stderr) and exit")
	reportOnly := flag.String("report", "", "print the tables of an earlier run's CSV `FILES` (several, comma-separated: pooled) and exit (no root needed)")
	limit := flag.Duration("deadline", 3*time.Hour, "stop the run by then: its context ends, so the testbed is torn down and the cases done so far are in -out; if it is still running a minute later, exit 3 with every goroutine's stack; 0 = no deadline")
	flag.Parse()
	c.cases = splitList(cases)
	if topo != "" {
		c.cases = []string{topo}
	}
	c.policies = splitList(policies)
	c.apps = splitList(apps)
	c.agentArgs = strings.Fields(agentArgs)
	if err := c.check(); err != nil {
		fmt.Fprintln(os.Stderr, "shoal-experiment:", err)
		os.Exit(2)
	}
	if *fromLog != "" {
		recs, err := recsFromLog(c, *fromLog)
		if err == nil {
			err = writeCSV(c.out, recs)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "shoal-experiment:", err)
			os.Exit(1)
		}
		return
	}
	if *reportOnly != "" {
		if err := reprint(c, *reportOnly, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "shoal-experiment:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *limit)
		defer cancel()
		defer deadline.Start("shoal-experiment", *limit+time.Minute)()
	}
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shoal-experiment:", err)
		os.Exit(1)
	}
}

// workDir is the run's work directory: keep, created (a directory that
// exists would mix two runs' logs), or a new temporary one when keep is
// empty.
func workDir(keep string) (string, error) {
	if keep == "" {
		return os.MkdirTemp("", "shoal-experiment-")
	}
	if err := os.Mkdir(keep, 0o755); err != nil {
		return "", fmt.Errorf("-keep: %w (give a directory that does not exist yet)", err)
	}
	return filepath.Abs(keep)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// check rejects flag values no run could use, before anything starts.
func (c config) check() error {
	switch {
	case len(c.cases) == 0:
		return errors.New("-cases: no case given")
	case len(c.policies) == 0:
		return errors.New("-policies: no policy given")
	case c.mpi != "openmpi" && c.mpi != "mpich":
		return fmt.Errorf("-mpi %q: use openmpi or mpich", c.mpi)
	case c.reps < 0 || c.coldReps < 0:
		return fmt.Errorf("-reps %d, -cold-reps %d: must be >= 0", c.reps, c.coldReps)
	case c.np < 2:
		return fmt.Errorf("-np %d: at least 2 ranks", c.np)
	case !(c.changeScale > 0) || math.IsInf(c.changeScale, 0):
		return fmt.Errorf("-change-scale %v: use a finite factor > 0", c.changeScale)
	case c.usesSlurm() && (c.ppn <= 0 || c.np%c.ppn != 0):
		return fmt.Errorf("-policies with Slurm's: give -ppn dividing -np (%d), so that Slurm is asked for -np/-ppn nodes as shoal is", c.np)
	case c.usesSlurm() && (c.peerReps < 0 || c.arrayTasks < 1 || c.poll <= 0):
		return fmt.Errorf("-peer-reps %d, -array-tasks %d, -poll %v: want >= 0, >= 1, > 0", c.peerReps, c.arrayTasks, c.poll)
	}
	for _, p := range c.policies {
		name, _, _ := parsePolicy(p)
		switch name {
		case polSlurm, polSlurmTree, polSlurmMeasured, "oracle", "t-oracle", placement.PolicyRandom, placement.PolicySequential, placement.PolicyLoad, placement.PolicyPaper, placement.PolicyNetload:
		default:
			return fmt.Errorf("-policies: unknown policy %q", p)
		}
	}
	for _, a := range c.apps {
		if a != "halo" && a != "lammps" {
			return fmt.Errorf("-apps: unknown program %q (halo, lammps)", a)
		}
	}
	return nil
}

// caseFile is the topology file of a case: NAME is DIR/NAME.json, a
// path ending in .json is itself.
func (c config) caseFile(name string) string {
	if strings.HasSuffix(name, ".json") || strings.Contains(name, "/") {
		return name
	}
	return filepath.Join(c.testbed, name+".json")
}

// runRec is one MPI run.
type runRec struct {
	Rep, Order     int
	Policy         string
	Hosts          []string // one entry per rank, in rank order
	TimeS, CommS   float64  // the program's own timing (slowest rank / LAMMPS loop time)
	WallS          float64  // mpirun from start to exit
	ModelT         float64  // shoal's T for the group (alloc's Score.T), 0 for the oracles
	MinAvailMbps   float64  // slowest pair (slower direction) under the configured rates of the run's phase
	Switches, Hogs int
	Err            string
	Case           string // the testbed case (topology name)
	Kind           string // "cold" (the policy's first placement after formation) or "steady"
	Phase          int    // scheduled link changes applied when the run started
	App            string // halo or lammps
	// AllocS is how long `shoal alloc` took to answer for the group:
	// at a cold start, a network-aware policy's wait for the network model.
	AllocS float64
	// PlacedS is when the steady-state run's placement was asked, in
	// seconds after the first steady-state repetition began (0 at the
	// cold start); Retest whether that was before or after the first
	// re-test of its phase's changed node (retestBefore, retestAfter; ""
	// unknown or not after a change).
	PlacedS float64
	Retest  string
	// Net is what TCP met on the group's nodes during the run (RTOs,
	// retransmissions, tail loss probes; tbf drops of the whole testbed):
	// in the log line, not the CSV.
	Net netns.Counters
}

func run(ctx context.Context, c config, out io.Writer) error {
	if ok, why := netns.Available(); !ok {
		return fmt.Errorf("needs the netns testbed: %s", why)
	}
	var topos []netns.Topology
	for _, name := range c.cases {
		topo, err := netns.LoadTopology(c.caseFile(name))
		if err != nil {
			return err
		}
		topos = append(topos, topo)
	}
	shoal, err := filepath.Abs(c.shoal)
	if err != nil {
		return err
	}
	if _, err := os.Stat(shoal); err != nil {
		return fmt.Errorf("shoal binary: %w (make build)", err)
	}
	work, err := workDir(c.keep)
	if err != nil {
		return err
	}
	if c.keep == "" {
		defer os.RemoveAll(work)
		// A signal tears the testbed down and re-raises itself: the defer
		// above would not run.
		defer netns.AtSignal(func() { _ = os.RemoveAll(work) })()
	}
	apps, err := buildApps(c, work)
	if err != nil {
		return err
	}
	start := time.Now()
	say := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs load %s] %s\n", time.Since(start).Seconds(), loadAvg(), fmt.Sprintf(format, args...))
	}
	var recs []runRec
	var peerCases []peerCase
	for i, topo := range topos {
		cs := caseRun{c: c, topo: topo, shoal: shoal, work: filepath.Join(work, fmt.Sprintf("case%d", i)), apps: apps, say: say,
			seed: c.seed + uint64(i)*7919, np: c.np}
		if len(topo.JobSizes) > 0 {
			cs.np = topo.JobSizes[0]
		}
		caseStart := time.Now()
		got, err := cs.run(ctx, out)
		recs = append(recs, got...)
		if cs.peers != nil {
			peerCases = append(peerCases, peerCase{topo: topo, recs: got, peers: cs.peers, loads: cs.loads})
		}
		if werr := writeCSV(c.out, recs); werr != nil {
			return errors.Join(err, werr)
		}
		if err != nil {
			return fmt.Errorf("case %s: %w (runs so far in %s)", topo.Name, err, c.out)
		}
		say("case %s done in %v", topo.Name, time.Since(caseStart).Round(time.Second))
	}
	fmt.Fprintf(out, "\n# shoal-experiment: %d cases, %d runs, took %v\n", len(topos), len(recs), time.Since(start).Round(time.Second))
	report(out, c, bySize(topos), recs)
	for _, pc := range peerCases {
		peersReport(out, c, pc)
	}
	fmt.Fprintf(out, "\nevery run: %s\n", c.out)
	return nil
}

// loadAvg is the host's 1-minute load average: the machine is shared,
// and every progress line carries it so a slow run can be read against it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// parsePolicy splits a policy spec NAME[@ALPHA][/WEIGHT...], e.g.
// netload@0.1/flow=0.
func parsePolicy(spec string) (name, alpha string, weights []string) {
	parts := strings.Split(spec, "/")
	name, alpha, _ = strings.Cut(parts[0], "@")
	return name, alpha, parts[1:]
}

// allocCov asks node's agent where policy would put np processes and returns
// one host per rank. A policy written NAME@A/W1/W2 is NAME asked with
// --alpha A --weight W1 --weight W2 (e.g. netload@0.1/flow=0). hostfile,
// when set, restricts the answer to its hosts (--hostfile). It returns
// the agent's whole answer too: its score and, for a policy that reads
// the network, the network model's coverage.
func allocCov(ctx context.Context, l *lab.Lab, node, policy string, np, ppn int, seed int64, hostfile string) ([]string, api.AllocDecision, error) {
	args := []string{"alloc", "-n", strconv.Itoa(np), "--ppn", strconv.Itoa(ppn),
		"--seed", strconv.FormatInt(seed, 10), "--force", "--format", "json"}
	name, alpha, weights := parsePolicy(policy)
	args = append(args, "--policy", name)
	if alpha != "" {
		args = append(args, "--alpha", alpha)
	}
	for _, w := range weights {
		args = append(args, "--weight", w)
	}
	if hostfile != "" {
		args = append(args, "--hostfile", hostfile)
	}
	var d api.AllocDecision // `shoal alloc --format json` prints the API's answer
	out, err := l.Shoal(ctx, node, args...)
	if err != nil {
		return nil, d, err
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return nil, d, fmt.Errorf("shoal alloc --policy %s: %w: %q", policy, err, out)
	}
	var placed placement.Decision
	for _, h := range d.Hosts {
		placed.Hosts = append(placed.Hosts, placement.Host{Node: h.Node, NP: h.Procs})
	}
	hosts := ranksOf(placed)
	if len(hosts) != np {
		return nil, d, fmt.Errorf("shoal alloc --policy %s placed %d ranks (%v), want %d (wait: %q)", policy, len(hosts), hosts, np, d.WaitReason)
	}
	return hosts, d, nil
}

// runMPI runs the program on r.Hosts with mpiexec started on the first of
// them (as a user logged into the job's head node would), over TCP.
func runMPI(ctx context.Context, l *lab.Lab, rsh string, a app, c config, work string, r *runRec) {
	hf := filepath.Join(work, fmt.Sprintf("hosts-%s-%d-%s-%s", r.Kind, r.Rep, strings.NewReplacer("/", "_", "@", "_").Replace(r.Policy), a.name))
	var b strings.Builder
	for _, h := range slotsOf(r.Hosts) {
		fmt.Fprintf(&b, "%s:%d\n", h.Node, h.NP)
	}
	if err := os.WriteFile(hf, []byte(b.String()), 0o644); err != nil {
		r.Err = err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.runTimeout)
	defer cancel()
	np := strconv.Itoa(len(r.Hosts))
	var argv []string
	if c.mpi == "mpich" {
		argv = []string{"mpiexec.mpich", "-launcher", "ssh", "-launcher-exec", rsh, "-f", hf, "-n", np,
			"-iface", netns.Iface, "-genv", "UCX_TLS", "tcp"}
	} else {
		// Interfaces by subnet: Open MPI's names differ per node otherwise.
		sub := l.TB.Subnet().String()
		argv = []string{"mpirun.openmpi", "--allow-run-as-root", "--mca", "plm_rsh_agent", rsh,
			"--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "routed", "direct",
			"--mca", "oob_tcp_if_include", sub, "--mca", "btl_tcp_if_include", sub,
			"--mca", "btl", "tcp,self", "--mca", "pml", "ob1", "--mca", "mpi_yield_when_idle", "1",
			"--host", strings.ReplaceAll(strings.TrimSpace(b.String()), "\n", ","), "-np", np}
	}
	// mpirun and the rank it forks on the head share the head's hog
	// cgroup, as the launcher puts the other nodes' ranks in theirs
	// (without it rank 0 ran outside the hog's cgroup, unlike the others).
	argv, err := l.InHogCgroup(r.Hosts[0], append(argv, a.argv...))
	if err != nil {
		r.Err = err.Error()
		return
	}
	start := time.Now()
	outp, err := l.TB.Run(ctx, r.Hosts[0], argv...)
	r.WallS = time.Since(start).Seconds()
	if err != nil {
		r.Err = strings.ReplaceAll(truncate(err.Error(), 300), "\n", " ")
		return
	}
	if r.TimeS, r.CommS, err = a.parse(outp); err != nil {
		r.Err = strings.ReplaceAll(err.Error(), "\n", " ")
	}
}

// slotsOf groups one-host-per-rank into hosts with rank counts, in order
// of first appearance.
func slotsOf(ranks []string) []placement.Host {
	var out []placement.Host
	at := map[string]int{}
	for _, h := range ranks {
		if i, ok := at[h]; ok {
			out[i].NP++
			continue
		}
		at[h] = len(out)
		out = append(out, placement.Host{Node: h, NP: 1})
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// reprint prints the report of an earlier run from its CSV. A CSV from
// before the cases (12 columns) is one steady-state halo run of the
// -cases' first case (lab12 by default).
//
// path may list several CSVs, comma-separated: their runs are pooled,
// each file's repetitions numbered after the previous files'.
func reprint(c config, path string, out io.Writer) error {
	var recs []runRec
	for _, p := range splitList(path) {
		got, err := readCSV(p)
		if err != nil {
			return err
		}
		offset := 0
		for _, r := range recs {
			offset = max(offset, r.Rep)
		}
		for i := range got {
			got[i].Rep += offset
		}
		recs = append(recs, got...)
	}
	var topos []netns.Topology
	seen := map[string]bool{}
	present := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		if r.Case == "" {
			r.Case = strings.TrimSuffix(filepath.Base(c.caseFile(c.cases[0])), ".json")
		}
		present[r.Policy] = true
		name, _, _ := strings.Cut(r.Case, "/np")
		if seen[name] {
			continue
		}
		seen[name] = true
		topo, err := netns.LoadTopology(c.caseFile(name))
		if err != nil {
			return fmt.Errorf("case %s of %s: %w", r.Case, path, err)
		}
		topos = append(topos, topo)
	}
	var pols []string
	for _, p := range c.policies {
		if present[p] {
			pols = append(pols, p)
		}
	}
	c.policies = pols
	report(out, c, bySize(topos), recs)
	return nil
}

// bySize gives the report one case per job size of a case that queues
// several, named as its runs are (caseRun.caseName).
func bySize(topos []netns.Topology) []netns.Topology {
	var out []netns.Topology
	for _, t := range topos {
		if len(t.JobSizes) == 0 {
			out = append(out, t)
			continue
		}
		for _, np := range t.JobSizes {
			v := t
			v.Name = fmt.Sprintf("%s/np%d", t.Name, np)
			if !slices.ContainsFunc(out, func(o netns.Topology) bool { return o.Name == v.Name }) {
				out = append(out, v)
			}
		}
	}
	return out
}

// readCSV reads what writeCSV wrote.
func readCSV(path string) ([]runRec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read CSV: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read CSV %s: %w", path, err)
	}
	if len(rows) == 0 || !slices.Contains([]int{12, 16, 17, len(csvHeader)}, len(rows[0])) || rows[0][0] != "rep" {
		return nil, fmt.Errorf("read CSV %s: not a shoal-experiment CSV (want its %d-column header, 17 before placed_s and retest, 16 before alloc_s, or 12 before the cases)", path, len(csvHeader))
	}
	var recs []runRec
	for i, row := range rows[1:] {
		var r runRec
		var errs []error
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			errs = append(errs, err)
			return v
		}
		r.Rep, r.Order = int(num(row[0])), int(num(row[1]))
		r.Policy, r.Hosts = row[2], strings.Fields(row[3])
		r.TimeS, r.CommS, r.WallS, r.ModelT, r.MinAvailMbps = num(row[4]), num(row[5]), num(row[6]), num(row[7]), num(row[8])
		r.Switches, r.Hogs = int(num(row[9])), int(num(row[10]))
		r.Err = row[11]
		r.Kind, r.App = "steady", "halo"
		if len(row) >= 16 {
			r.Case, r.Kind, r.Phase, r.App = row[12], row[13], int(num(row[14])), row[15]
		}
		if len(row) >= 17 {
			r.AllocS = num(row[16])
		}
		if len(row) >= 19 {
			r.PlacedS, r.Retest = num(row[17]), row[18]
			switch r.Retest {
			case "", retestBefore, retestAfter:
			default:
				errs = append(errs, fmt.Errorf("retest %q: want %s, %s or empty", r.Retest, retestBefore, retestAfter))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("read CSV %s line %d: %w", path, i+2, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// csvHeader names the CSV's columns; case to app came with the cases,
// alloc_s with the wait for the network model, placed_s and retest with
// the split of a phase at its first re-test (absent: unknown).
var csvHeader = []string{"rep", "order", "policy", "hosts", "time_s", "comm_s", "wall_s", "model_T", "min_avail_mbps", "switches", "hog_nodes", "error",
	"case", "kind", "phase", "app", "alloc_s", "placed_s", "retest"}

// writeCSV writes to a temporary file and renames it over path, so a run
// killed while writing (the testbed tears down and exits on SIGTERM)
// keeps the previous complete CSV.
func writeCSV(path string, recs []runRec) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	defer func() {
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			_ = os.Remove(f.Name())
			err = fmt.Errorf("write CSV %s: %w", path, err)
		}
	}()
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	for _, r := range recs {
		_ = w.Write([]string{strconv.Itoa(r.Rep), strconv.Itoa(r.Order), r.Policy, strings.Join(r.Hosts, " "),
			fmt.Sprintf("%.6f", r.TimeS), fmt.Sprintf("%.6f", r.CommS), fmt.Sprintf("%.3f", r.WallS),
			fmt.Sprintf("%.4f", r.ModelT), fmt.Sprintf("%.1f", r.MinAvailMbps), strconv.Itoa(r.Switches), strconv.Itoa(r.Hogs), r.Err,
			r.Case, r.Kind, strconv.Itoa(r.Phase), r.App, fmt.Sprintf("%.3f", r.AllocS), fmt.Sprintf("%.1f", r.PlacedS), r.Retest})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}
