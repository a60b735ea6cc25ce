package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/testcluster"
)

// bench-launch compares, in one run and interleaved, the time from
// submission to every rank having started: `shoal run` on a 4-agent
// process cluster against plain `mpiexec` with the same hosts (Hydra's
// fork launcher on this one machine). Each rank of the probe program
// prints the wall clock at MPI_Init; the figure is the latest of those
// minus the time the command was started.
func cmdBenchLaunch(args []string) error {
	fs := flag.NewFlagSet("bench-launch", flag.ExitOnError)
	bin := fs.String("bin", "bin/shoal", "shoal binary")
	runs := fs.Int("runs", 5, "runs per size and launcher")
	sizes := fs.String("sizes", "8,32", "process counts")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "shoal-launch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prog := filepath.Join(dir, "stamp")
	src := filepath.Join(dir, "stamp.c")
	os.WriteFile(src, []byte(stampC), 0o644)
	if out, err := exec.Command("mpicc.mpich", "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		return fmt.Errorf("mpicc.mpich: %v: %s", err, out)
	}
	p, err := testcluster.StartProcs(testcluster.ProcOptions{Bin: *bin, N: 4, Dir: dir, BasePort: 47946})
	if err != nil {
		return err
	}
	defer p.StopAll()
	if err := p.WaitConverged(context.Background(), 60*time.Second); err != nil {
		return err
	}
	env := append(os.Environ(), "SHOAL_ADDR="+p.Addr(1), "SHOAL_TOKEN_FILE="+p.TokenFile)
	var rows [][]string
	for _, f := range strings.Split(*sizes, ",") {
		n, _ := strconv.Atoi(f)
		hosts := fmt.Sprintf("node1:%d,node2:%d,node3:%d,node4:%d", n/4, n/4, n/4, n-3*(n/4))
		var shoalT, mpiT []time.Duration
		for range *runs {
			d, err := stampRun(env, n, *bin, "run", "-n", strconv.Itoa(n), "--force", "--mpi", "mpich", "--", prog)
			if err != nil {
				return fmt.Errorf("shoal run: %w", err)
			}
			shoalT = append(shoalT, d)
			// Plain mpiexec with the same host list, all on this machine.
			d, err = stampRun(env, n, "mpiexec.mpich", "-launcher", "fork", "-hosts", hosts, "-n", strconv.Itoa(n), prog)
			if err != nil {
				return fmt.Errorf("mpiexec: %w", err)
			}
			mpiT = append(mpiT, d)
		}
		rows = append(rows, []string{strconv.Itoa(n), ms(median(mpiT)), ms(median(shoalT)), ms(median(shoalT) - median(mpiT)),
			fmt.Sprintf("%.2f", float64(median(shoalT))/float64(median(mpiT)))})
	}
	fmt.Printf("submit → all ranks started (MPICH, 4-agent cluster on loopback, median of %d interleaved runs)\n", *runs)
	table(os.Stdout, "ranks,mpiexec,shoal run,shoal adds,ratio", rows)
	return nil
}

func stampRun(env []string, n int, name string, args ...string) (time.Duration, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, errb.String())
	}
	var last int64
	k := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "STAMP "); ok {
			t, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			last = max(last, t)
			k++
		}
	}
	if k != n {
		return 0, fmt.Errorf("%d of %d ranks reported", k, n)
	}
	return time.Unix(0, last).Sub(start), nil
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
