package agent_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// BenchmarkRunFinishedJob times `shoal run -n 1 --mpi none -- true` on a
// one-agent cluster, from the CLI's start to its exit, and reports the
// median as ms/run. With SHOAL_BENCH_BASELINE_CLI naming another build of
// the CLI, each iteration also runs that one, interleaved (so both see the
// same load), reported as ms/run-baseline.
//
//	go test -run '^$' -bench RunFinishedJob -benchtime 20x ./agent
func BenchmarkRunFinishedJob(b *testing.B) {
	c := testcluster.New(b, 1, testcluster.Options{
		Bin:     testcluster.BuildShoal(b),
		Sampler: func(int) probe.Sampler { return idle{} },
		Configure: func(_ int, cfg *agent.Config) {
			cfg.Probes.InProcess = true
		},
	})
	c.WaitLeader(45 * time.Second)
	dir := b.TempDir()
	env := append(os.Environ(), "SHOAL_ADDR="+c.Client(0).Base, "SHOAL_TOKEN="+c.Token(),
		"SHOAL_AGENTS_CACHE="+filepath.Join(dir, "agents.json"))
	run := func(bin string) time.Duration {
		cmd := exec.Command(bin, "run", "-n", "1", "--mpi", "none", "--", "true")
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s run: %v\n%s", bin, err, out)
		}
		return time.Since(start)
	}
	bin, baseline := testcluster.BuildShoal(b), os.Getenv("SHOAL_BENCH_BASELINE_CLI")
	run(bin) // the first job warms the agent's paths
	var took, base []time.Duration
	b.ResetTimer()
	for range b.N {
		took = append(took, run(bin))
		if baseline != "" {
			base = append(base, run(baseline))
		}
	}
	b.StopTimer()
	b.ReportMetric(median(took), "ms/run")
	if baseline != "" {
		b.ReportMetric(median(base), "ms/run-baseline")
	}
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}
