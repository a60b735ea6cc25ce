// Command shoal-experiment reproduces seed 002 §5 on the network-namespace
// testbed: the same communication-heavy MPI program (examples/mpi/halo.c,
// Open MPI over TCP by default, MPICH with -mpi mpich) on the nodes chosen
// by random, sequential, load-aware, paper and netload placement (asked of
// a running shoal cluster with `shoal alloc`, also with other alpha and
// attribute weights), by a brute-force oracle over the configured link
// rates and by a brute-force minimiser of shoal's T over a perfect
// snapshot; policies interleaved in a fresh random order every
// repetition. It prints per-policy times, the seed's gain table and each
// policy's time over the oracle's, and writes every run to a CSV. Needs
// root.
//
//	go build -o bin/shoal ./cmd/shoal && go run ./cmd/shoal-experiment -reps 8
//
// docs/experiment.md describes the setup and the results.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/testcluster/lab"
	"github.com/shoal-hpc/shoal/testcluster/netns"
)

type config struct {
	topo, shoal, halo, out string
	reps, np, ppn          int
	iters, haloKiB, sweeps int
	confine                int
	mpi                    string
	bwWait, runTimeout     time.Duration
	policies               []string
	seed                   uint64
	agentArgs              []string
	verbose                bool
}

func main() {
	var c config
	var policies, agentArgs string
	flag.StringVar(&c.topo, "topo", "testbed/lab12.json", "topology `FILE`")
	flag.StringVar(&c.shoal, "shoal", "bin/shoal", "shoal `BINARY`")
	flag.StringVar(&c.halo, "halo", "examples/mpi/halo.c", "MPI program: a .c file (built with mpicc.mpich) or an executable")
	flag.StringVar(&c.out, "out", "experiment.csv", "CSV `FILE` of every run")
	flag.IntVar(&c.reps, "reps", 5, "repetitions (each runs every policy once)")
	flag.IntVar(&c.np, "np", 4, "MPI ranks (the machine has 2 cores: keep it small)")
	flag.IntVar(&c.ppn, "ppn", 0, "ranks per node asked of shoal alloc (0: placement decides from each node's free cores)")
	flag.IntVar(&c.iters, "iters", 15, "halo iterations")
	flag.IntVar(&c.haloKiB, "halo-kib", 256, "halo size in KiB per neighbour and direction")
	flag.IntVar(&c.sweeps, "sweeps", 4, "relaxation sweeps per iteration (compute)")
	flag.StringVar(&c.mpi, "mpi", "openmpi", "MPI `FLAVOUR`: openmpi (TCP BTL, yields when idle) or mpich (ch4:ucx, UCX_TLS=tcp, busy-polls)")
	flag.IntVar(&c.confine, "hog-quota", 30, "CPU quota, percent of one core, of each loaded node (its hogs and ranks); 0: hogs as netns starts them")
	flag.DurationVar(&c.bwWait, "bw-wait", 150*time.Second, "how long to wait for one full bandwidth cycle before running anyway")
	flag.DurationVar(&c.runTimeout, "run-timeout", 3*time.Minute, "longest one MPI run may take")
	flag.StringVar(&policies, "policies", "random,sequential,load,paper,netload,netload@0.1,netload/flow=0,t-oracle,oracle",
		"policies to compare: shoal's (random, sequential, load, paper, netload; NAME@A/W asks with --alpha A --weight W), t-oracle, oracle")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the run order and of the random and sequential policies")
	flag.StringVar(&agentArgs, "agent-args", "--bandwidth-bytes 1MiB --bandwidth-interval 30m --latency-interval 10s", "extra `FLAGS` for every shoal agent")
	flag.BoolVar(&c.verbose, "v", false, "log the testbed's and the lab's progress")
	reportOnly := flag.String("report", "", "print the tables of an earlier run's CSV `FILE` and exit (no root needed)")
	flag.Parse()
	c.policies = strings.Split(policies, ",")
	c.agentArgs = strings.Fields(agentArgs)
	if *reportOnly != "" {
		if err := reprint(c, *reportOnly, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "shoal-experiment:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shoal-experiment:", err)
		os.Exit(1)
	}
}

// runRec is one MPI run.
type runRec struct {
	Rep, Order     int
	Policy         string
	Hosts          []string // one entry per rank, in rank order
	TimeS, CommS   float64  // halo's own timing (slowest rank)
	WallS          float64  // mpiexec from start to exit
	ModelT         float64  // shoal's T for the group (alloc's Score.T), 0 for the oracles
	MinAvailMbps   float64  // slowest pair under the configured rates
	Switches, Hogs int
	Err            string
}

func run(ctx context.Context, c config, out io.Writer) error {
	if ok, why := netns.Available(); !ok {
		return fmt.Errorf("needs the netns testbed: %s", why)
	}
	topo, err := netns.LoadTopology(c.topo)
	if err != nil {
		return err
	}
	shoal, err := filepath.Abs(c.shoal)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "shoal-experiment-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if c.mpi != "openmpi" && c.mpi != "mpich" {
		return fmt.Errorf("-mpi %q: use openmpi or mpich", c.mpi)
	}
	prog, err := buildProgram(c.halo, work, c.mpi)
	if err != nil {
		return err
	}
	logLevel := slog.LevelWarn
	if c.verbose {
		logLevel = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel}))
	start := time.Now()
	say := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	say("bringing up %s: %d nodes, %d switches, %d flows, %d hog nodes", topo.Name, len(topo.Nodes), len(topo.Switches), len(topo.Flows), len(topo.Hogs))
	l, err := lab.Up(ctx, topo, lab.Options{
		Shoal: shoal, Dir: filepath.Join(work, "lab"), Logger: log,
		AgentArgs: c.agentArgs, EmulateLoad: true, ConfineHogs: c.confine,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := l.Close(); err != nil {
			say("teardown: %v", err)
		}
	}()
	leader, err := l.WaitFormed(ctx, 2*time.Minute)
	if err != nil {
		return err
	}
	nodes := l.Nodes()
	asker := nodes[len(nodes)-1]
	if asker == leader {
		asker = nodes[len(nodes)-2]
	}
	say("cluster formed, leader %s; placement asked of %s", leader, asker)
	full := len(nodes) * (len(nodes) - 1) / 2
	if err := l.WaitBandwidthCycle(ctx, asker, full, c.bwWait); err != nil {
		n, _, _ := l.MeasuredPairs(ctx, asker)
		say("bandwidth: %d of %d pairs measured after %v; running anyway (%v)", n, full, c.bwWait, err)
	} else {
		say("bandwidth: all %d pairs measured", full)
	}
	if net, err := l.Shoal(ctx, asker, "net", "--color", "never"); err == nil {
		fmt.Fprintf(out, "shoal net (Mbit/s) as %s sees it before the runs:\n%s\n", asker, net)
	}
	m := newModel(topo)
	oracleHosts, err := m.oracle(c.np)
	if err != nil {
		return err
	}
	tOracleHosts, td, err := m.tOracle(c.np, c.ppn)
	if err != nil {
		return err
	}
	say("oracle group (configured rates, no hog nodes, fastest slowest pair): %v", oracleHosts)
	say("t-oracle group (least T over a perfect snapshot, T=%.3f): %v", td.Score.T, tOracleHosts)
	rsh, err := l.LauncherScript()
	if err != nil {
		return err
	}

	var recs []runRec
	rng := rand.New(rand.NewPCG(c.seed, 0xe4))
	for rep := 1; rep <= c.reps; rep++ {
		order := append([]string(nil), c.policies...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for i, pol := range order {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r := runRec{Rep: rep, Order: i + 1, Policy: pol}
			switch pol {
			case "oracle":
				r.Hosts = oracleHosts
			case "t-oracle":
				r.Hosts = tOracleHosts
			default:
				r.Hosts, r.ModelT, err = alloc(ctx, l, asker, pol, c.np, c.ppn, int64(c.seed)*1000+int64(rep))
				if err != nil {
					return err
				}
			}
			r.MinAvailMbps, r.Switches, r.Hogs = m.groupStats(r.Hosts)
			runMPI(ctx, l, rsh, prog, c, work, &r)
			recs = append(recs, r)
			status := fmt.Sprintf("%.3fs (comm %.3fs)", r.TimeS, r.CommS)
			if r.Err != "" {
				status = "FAILED: " + r.Err
			}
			say("rep %d/%d %-10s on %-15s -> %s", rep, c.reps, pol, strings.Join(r.Hosts, ","), status)
		}
	}
	if err := writeCSV(c.out, recs); err != nil {
		return err
	}
	report(out, c, topo, recs, oracleHosts, tOracleHosts, time.Since(start))
	fmt.Fprintf(out, "\nevery run: %s\n", c.out)
	return nil
}

// buildProgram compiles a .c file with MPICH's mpicc, or returns the
// executable it is given.
func buildProgram(src, dir, flavour string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(src, ".c") {
		return abs, nil
	}
	exe := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	cc := "mpicc." + flavour
	if b, err := exec.Command(cc, "-O2", "-o", exe, abs, "-lm").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", cc, src, err, b)
	}
	return exe, nil
}

// parsePolicy splits a policy spec NAME[@ALPHA][/WEIGHT...], e.g.
// netload@0.1/flow=0.
func parsePolicy(spec string) (name, alpha string, weights []string) {
	parts := strings.Split(spec, "/")
	name, alpha, _ = strings.Cut(parts[0], "@")
	return name, alpha, parts[1:]
}

// alloc asks node's agent where policy would put np processes and returns
// one host per rank. A policy written NAME@A/W1/W2 is NAME asked with
// --alpha A --weight W1 --weight W2 (e.g. netload@0.1/flow=0).
func alloc(ctx context.Context, l *lab.Lab, node, policy string, np, ppn int, seed int64) ([]string, float64, error) {
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
	var d api.AllocDecision // `shoal alloc --format json` prints the API's answer
	out, err := l.Shoal(ctx, node, args...)
	if err != nil {
		return nil, 0, err
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return nil, 0, fmt.Errorf("shoal alloc --policy %s: %w: %q", policy, err, out)
	}
	var placed placement.Decision
	for _, h := range d.Hosts {
		placed.Hosts = append(placed.Hosts, placement.Host{Node: h.Node, Procs: h.Procs})
	}
	hosts := ranksOf(placed)
	if len(hosts) != np {
		return nil, 0, fmt.Errorf("shoal alloc --policy %s placed %d ranks (%v), want %d (wait: %q)", policy, len(hosts), hosts, np, d.WaitReason)
	}
	return hosts, d.Score.T, nil
}

var haloLine = regexp.MustCompile(`time_s=([0-9.]+) comm_s=([0-9.]+)`)

// runMPI runs the program on r.Hosts with mpiexec started on the first of
// them (as a user logged into the job's head node would), over TCP.
func runMPI(ctx context.Context, l *lab.Lab, rsh, prog string, c config, work string, r *runRec) {
	hf := filepath.Join(work, fmt.Sprintf("hosts-%d-%s", r.Rep, strings.NewReplacer("/", "_", "@", "_").Replace(r.Policy)))
	var b strings.Builder
	for _, h := range slotsOf(r.Hosts) {
		fmt.Fprintf(&b, "%s:%d\n", h.Node, h.Procs)
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
	argv = append(argv, prog, strconv.Itoa(c.iters), strconv.Itoa(c.haloKiB), strconv.Itoa(c.sweeps))
	start := time.Now()
	outp, err := l.TB.Run(ctx, r.Hosts[0], argv...)
	r.WallS = time.Since(start).Seconds()
	if err != nil {
		r.Err = strings.ReplaceAll(truncate(err.Error(), 300), "\n", " ")
		return
	}
	mm := haloLine.FindStringSubmatch(outp)
	if mm == nil {
		r.Err = "no timing line in output: " + truncate(outp, 200)
		return
	}
	r.TimeS, _ = strconv.ParseFloat(mm[1], 64)
	r.CommS, _ = strconv.ParseFloat(mm[2], 64)
}

// slotsOf groups one-host-per-rank into hosts with rank counts, in order
// of first appearance.
func slotsOf(ranks []string) []placement.Host {
	var out []placement.Host
	at := map[string]int{}
	for _, h := range ranks {
		if i, ok := at[h]; ok {
			out[i].Procs++
			continue
		}
		at[h] = len(out)
		out = append(out, placement.Host{Node: h, Procs: 1})
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// reprint prints the report of an earlier run from its CSV.
func reprint(c config, path string, out io.Writer) error {
	topo, err := netns.LoadTopology(c.topo)
	if err != nil {
		return err
	}
	recs, err := readCSV(path)
	if err != nil {
		return err
	}
	present := map[string]bool{}
	var oracle, tOracle []string
	for _, r := range recs {
		present[r.Policy] = true
		c.reps = max(c.reps, r.Rep)
		switch r.Policy {
		case "oracle":
			oracle = r.Hosts
		case "t-oracle":
			tOracle = r.Hosts
		}
	}
	var pols []string
	for _, p := range c.policies {
		if present[p] {
			pols = append(pols, p)
		}
	}
	c.policies = pols
	report(out, c, topo, recs, oracle, tOracle, 0)
	return nil
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
	if len(rows) == 0 || len(rows[0]) != 12 || rows[0][0] != "rep" {
		return nil, fmt.Errorf("read CSV %s: not a shoal-experiment CSV (want its 12-column header)", path)
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
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("read CSV %s line %d: %w", path, i+2, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func writeCSV(path string, recs []runRec) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"rep", "order", "policy", "hosts", "time_s", "comm_s", "wall_s", "model_T", "min_avail_mbps", "switches", "hog_nodes", "error"})
	for _, r := range recs {
		_ = w.Write([]string{strconv.Itoa(r.Rep), strconv.Itoa(r.Order), r.Policy, strings.Join(r.Hosts, " "),
			fmt.Sprintf("%.6f", r.TimeS), fmt.Sprintf("%.6f", r.CommS), fmt.Sprintf("%.3f", r.WallS),
			fmt.Sprintf("%.4f", r.ModelT), fmt.Sprintf("%.1f", r.MinAvailMbps), strconv.Itoa(r.Switches), strconv.Itoa(r.Hogs), r.Err})
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}
