package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/internal/deadline"
	"github.com/shoal-hpc/shoal/internal/launchtrace"
	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-launch compares, in one run and interleaved, the time from
// submission to every rank having started: `shoal run` on a 4-agent
// process cluster against plain `mpiexec` with the same hosts (Hydra's
// fork launcher on this one machine). Each rank of the probe program
// prints the wall clock before MPI_Init; the figure is the latest of
// those minus the time the command was started.
//
// It then breaks each size's shoal figure down by stage: the agents run
// with debug JSON logs, whose launch stage lines (internal/launchtrace)
// say when each job reached each stage, on the same clock as the client.
// A last row per run times `shoal run -n 1 --mpi none -- true` from
// start to return. Last, per job process and on its own node, the time
// from the moment it was due (the launcher's begin on the head, a remote
// exec's arrival) to its job helper having executed it.
//
// With -vs, other binaries (comma-separated) each run on a 4-agent
// cluster of their own (the next 12 ports each), and every run goes to
// each cluster in turn: builds compared under the same load, which on a
// shared machine moves more between minutes than a change does.
func cmdBenchLaunch(args []string) error {
	fs := flag.NewFlagSet("bench-launch", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	vs := fs.String("vs", "", "other shoal binaries, comma-separated, each run interleaved with -bin on a cluster of its own (e.g. the build before a change)")
	runs := fs.Int("runs", 5, "runs per size and launcher")
	sizes := fs.String("sizes", "8,32", "process counts")
	port := fs.Int("port", 28946, "first port of the agents (three each; below the ephemeral range, where a connection's own port cannot take one)")
	limit := deadline.Flag(fs, 20*time.Minute)
	fs.Parse(args)
	defer deadline.Start("bench-launch", *limit)()
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 4 {
			return fmt.Errorf("-sizes: %q is not a process count of 4 or more", f)
		}
		ns = append(ns, n)
	}
	dir, err := os.MkdirTemp("", "shoal-launch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prog := filepath.Join(dir, "stamp")
	src := filepath.Join(dir, "stamp.c")
	if err := os.WriteFile(src, []byte(stampC), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("mpicc.mpich", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		return fmt.Errorf("mpicc.mpich: %v: %s", err, out)
	}
	bins := []string{*bin}
	if *vs != "" {
		bins = append(bins, strings.Split(*vs, ",")...)
	}
	var sides []*launchSide
	for i, b := range bins {
		cdir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(cdir, 0o755); err != nil {
			return err
		}
		p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: b, N: 4, Dir: cdir, BasePort: *port + 12*i,
			Args: []string{"--log-level", "debug", "--log-json"}})
		if err != nil {
			return err
		}
		defer p.StopAll()
		sides = append(sides, &launchSide{bin: b, p: p, env: append(os.Environ(), "SHOAL_ADDR="+p.Addr(1), "SHOAL_TOKEN_FILE="+p.TokenFile),
			shoalT: map[int][]time.Duration{}, mpiT: map[int][]time.Duration{}})
	}
	for _, sd := range sides {
		if err := sd.p.WaitConverged(context.Background(), 60*time.Second); err != nil {
			return err
		}
	}
	for _, n := range ns {
		for range *runs {
			for _, sd := range sides {
				if err := sd.run(n, prog); err != nil {
					return err
				}
			}
		}
	}
	for _, sd := range sides {
		if len(sides) > 1 {
			fmt.Printf("\n==== %s\n", sd.bin)
		}
		if err := sd.print(os.Stdout, ns, *runs); err != nil {
			return err
		}
	}
	return nil
}

// launchSide is one cluster of bench-launch and what its runs measured.
type launchSide struct {
	bin string
	p   *testcluster.ProcCluster
	env []string
	// jobs are the shoal runs in the order they were submitted: on this
	// new cluster, job IDs count up from 1 in the same order.
	jobs         []launchRun
	trueT        []time.Duration
	shoalT, mpiT map[int][]time.Duration
}

// run is one run of size n: shoal run, plain mpiexec with the same host
// list, all on this machine, and the `true` job.
func (sd *launchSide) run(n int, prog string) error {
	hosts := fmt.Sprintf("node1:%d,node2:%d,node3:%d,node4:%d", n/4, n/4, n/4, n-3*(n/4))
	r, err := stampRun(sd.env, n, sd.bin, "run", "-n", strconv.Itoa(n), "--force", "--mpi", "mpich", "--", prog)
	if err != nil {
		return fmt.Errorf("shoal run: %w", err)
	}
	r.np = n
	sd.jobs = append(sd.jobs, r)
	sd.shoalT[n] = append(sd.shoalT[n], r.ranks)
	m, err := stampRun(sd.env, n, "mpiexec.mpich", "-launcher", "fork", "-hosts", hosts, "-n", strconv.Itoa(n), prog)
	if err != nil {
		return fmt.Errorf("mpiexec: %w", err)
	}
	sd.mpiT[n] = append(sd.mpiT[n], m.ranks)
	t, err := stampRun(sd.env, 0, sd.bin, "run", "-n", "1", "--force", "--mpi", "none", "--", "true")
	if err != nil {
		return fmt.Errorf("shoal run true: %w", err)
	}
	sd.jobs = append(sd.jobs, t)
	sd.trueT = append(sd.trueT, t.returned)
	return nil
}

// print writes the side's tables: the totals, then the breakdowns.
func (sd *launchSide) print(w io.Writer, ns []int, runs int) error {
	var rows [][]string
	for _, n := range ns {
		shoalT, mpiT := sd.shoalT[n], sd.mpiT[n]
		rows = append(rows, []string{strconv.Itoa(n), ms(median(mpiT)), ms(median(shoalT)), ms(median(shoalT) - median(mpiT)),
			fmt.Sprintf("%.2f", float64(median(shoalT))/float64(median(mpiT)))})
	}
	fmt.Fprintf(w, "submit → all ranks started (MPICH, 4-agent cluster on loopback, median of %d interleaved runs)\n", runs)
	table(w, "ranks,mpiexec,shoal run,shoal adds,ratio", rows)
	fmt.Fprintf(w, "\nshoal run -n 1 --mpi none -- true, start to return: median %s, p90 %s of %d\n", ms(median(sd.trueT)), ms(pct(sd.trueT, 0.9)), len(sd.trueT))
	stages, err := readStages(sd.p)
	if err != nil {
		return err
	}
	if err := printBreakdown(w, sd.jobs, stages); err != nil {
		return err
	}
	gaps, err := readCommitGaps(sd.p)
	if err != nil {
		return err
	}
	gaps.print(w)
	spans, err := readHelperSpans(sd.p)
	if err != nil {
		return err
	}
	spans.print(w)
	return nil
}

// launchRun is what the client saw of one run, each instant as the time
// since the command was started: the latest rank's start (before
// MPI_Init), the first line of output, and the command's return.
type launchRun struct {
	np                     int // 0 for the `true` job
	start                  time.Time
	ranks, first, returned time.Duration
}

func stampRun(env []string, n int, name string, args ...string) (launchRun, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		return launchRun{}, err
	}
	r := launchRun{start: time.Now()}
	if err := cmd.Start(); err != nil {
		return launchRun{}, err
	}
	var last int64
	k := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r.first == 0 {
			r.first = time.Since(r.start)
		}
		if v, ok := strings.CutPrefix(sc.Text(), "STAMP "); ok {
			t, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			last = max(last, t)
			k++
		}
	}
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return launchRun{}, fmt.Errorf("%v: %s", err, errb.String())
	}
	r.returned = time.Since(r.start)
	if k != n {
		return launchRun{}, fmt.Errorf("%d of %d ranks reported", k, n)
	}
	if n > 0 {
		r.ranks = time.Unix(0, last).Sub(r.start)
	}
	return r, nil
}

// readStages reads every agent's launch stage lines, by job.
func readStages(p *testcluster.ProcCluster) (map[uint64]launchtrace.Instants, error) {
	var all []launchtrace.Event
	for _, n := range p.Nodes {
		f, err := os.Open(n.Log)
		if err != nil {
			return nil, fmt.Errorf("agent log: %w", err)
		}
		ev, err := launchtrace.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Log, err)
		}
		all = append(all, ev...)
	}
	return launchtrace.ByJob(all), nil
}

// breakdownRows are the table's rows: a stage several nodes reach shows
// when the first did where that is the head's own step (its cgroup, its
// launcher), and when the last did where the launch waits for all.
var breakdownRows = []struct {
	label string
	stage launchtrace.Stage
	first bool
}{
	{"submit received by the agent", launchtrace.SubmitReceived, false},
	{"submit_job committed", launchtrace.SubmitCommitted, false},
	{"leader's round begins", launchtrace.RoundStart, false},
	{"placement decided", launchtrace.Placed, false},
	{"place_job committed", launchtrace.PlaceCommitted, false},
	{"last host applied place_job", launchtrace.PlacementSeen, false},
	{"last host's ack committed", launchtrace.AckCommitted, false},
	{"start_job committed", launchtrace.StartCommitted, false},
	{"head begins the launcher", launchtrace.LauncherBegin, false},
	{"head's cgroup created", launchtrace.CgroupReady, true},
	{"head's helper started (mpiexec)", launchtrace.HelperStarted, true},
	{"last remote exec received (shoal rsh)", launchtrace.ExecReceived, false},
	{"last cgroup created", launchtrace.CgroupReady, false},
	{"last helper started", launchtrace.HelperStarted, false},
}

// printBreakdown prints, per size, the median time since the command
// started at which the jobs reached each stage, and the step from the row
// before.
func printBreakdown(w io.Writer, runs []launchRun, stages map[uint64]launchtrace.Instants) error {
	ids := make([]uint64, 0, len(stages))
	for id := range stages {
		if id != 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) != len(runs) {
		return fmt.Errorf("the agents' logs hold stages of %d jobs, the bench ran %d: is the agent built with launch stages?", len(ids), len(runs))
	}
	var sizes []int
	for _, r := range runs {
		if !slices.Contains(sizes, r.np) {
			sizes = append(sizes, r.np)
		}
	}
	for _, np := range sizes {
		at := make([][]time.Duration, len(breakdownRows)+3)
		for i, r := range runs {
			if r.np != np {
				continue
			}
			s := stages[ids[i]]
			for k, row := range breakdownRows {
				m := s.Last
				if row.first {
					m = s.First
				}
				if t, ok := m[row.stage]; ok {
					at[k] = append(at[k], t.Sub(r.start))
				}
			}
			n := len(breakdownRows)
			if np > 0 {
				at[n] = append(at[n], r.ranks)
			}
			if r.first > 0 {
				at[n+1] = append(at[n+1], r.first)
			}
			at[n+2] = append(at[n+2], r.returned)
		}
		labels := make([]string, 0, len(at))
		for _, row := range breakdownRows {
			labels = append(labels, row.label)
		}
		labels = append(labels, "last rank started (before MPI_Init)", "first output at the client", "shoal run returned")
		what := fmt.Sprintf("shoal run -n %d --mpi mpich", np)
		if np == 0 {
			what = "shoal run -n 1 --mpi none -- true"
		}
		fmt.Fprintf(w, "\nbreakdown of %s: median time since the command started (step: from the row above)\n", what)
		var rows [][]string
		prev := time.Duration(0)
		for k, ds := range at {
			if len(ds) == 0 {
				continue
			}
			m := median(ds)
			rows = append(rows, []string{labels[k], fmt.Sprintf("%.1f ms", msf(m)), fmt.Sprintf("%+.1f ms", msf(m-prev))})
			prev = m
		}
		table(w, "stage,at,step", rows)
	}
	return nil
}

const stampC = `#include <mpi.h>
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);   /* before MPI_Init: the rank exists */
    MPI_Init(&argc, &argv);
    printf("STAMP %lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    MPI_Finalize();
    return 0;
}
`
