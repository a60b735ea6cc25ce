package confine

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// benchHierarchies are the ways to confine benchmarked, on this machine
// those that open.
var benchHierarchies = []struct {
	name string
	open func(Config) (*Manager, error)
}{
	{"v1", openV1},
	{"v2", func(c Config) (*Manager, error) { return openV2(c, unifiedMount(), v2Need) }},
	{"v2-no-controllers", func(c Config) (*Manager, error) { return openV2(c, unifiedMount(), nil) }},
}

// BenchmarkCreateAddDelete is what confining costs an attempt on one node:
// create its cgroup with a memory limit and a CPU quota, move a process in,
// and delete the cgroup once the process has left (moved into the next).
func BenchmarkCreateAddDelete(b *testing.B) {
	for _, h := range benchHierarchies {
		b.Run(h.name, func(b *testing.B) {
			needRoot(b)
			if h.name != "v1" && unifiedMount() == "" {
				b.Skip("no cgroup2 hierarchy")
			}
			m := testManager(b, h.open)
			l := Limits{}
			if m.Support().has("memory") {
				l = Limits{MemoryBytes: 64 << 20, CPUs: 1}
			}
			sleeper := exec.Command("sleep", "600")
			if err := sleeper.Start(); err != nil {
				b.Fatal(err)
			}
			var prev *Cgroup
			b.Cleanup(func() {
				sleeper.Process.Kill()
				sleeper.Wait()
				if prev != nil {
					if err := deleteWhenEmpty(prev); err != nil {
						b.Error(err)
					}
				}
			})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cg, err := m.New(fmt.Sprintf("job-%d-0", i), l)
				if err != nil {
					b.Fatal(err)
				}
				if err := cg.Add(sleeper.Process.Pid); err != nil {
					b.Fatal(err)
				}
				if prev != nil {
					if err := prev.Delete(); err != nil {
						b.Fatal(err)
					}
				}
				prev = cg
			}
		})
	}
}

// BenchmarkJobStart starts `true` through the job helper and waits for it,
// unconfined and in a cgroup of its own made before it (and deleted after
// it, off the clock): the difference is what confining adds to a job's
// start.
func BenchmarkJobStart(b *testing.B) {
	run := func(b *testing.B, cg *Cgroup) {
		var spec jobexec.Spec
		if cg != nil {
			spec.Cgroup = cg.Dirs()
		}
		cmd, err := jobexec.Command("", spec, []string{"/bin/true"})
		if err != nil {
			b.Fatal(err)
		}
		if err := jobexec.Start(cmd); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("unconfined", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(b, nil)
		}
	})
	for _, h := range benchHierarchies {
		b.Run(h.name, func(b *testing.B) {
			needRoot(b)
			if h.name != "v1" && unifiedMount() == "" {
				b.Skip("no cgroup2 hierarchy")
			}
			m := testManager(b, h.open)
			l := Limits{}
			if m.Support().has("memory") {
				l = Limits{MemoryBytes: 64 << 20, CPUs: 1}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cg, err := m.New(fmt.Sprintf("job-%d-0", i), l)
				if err != nil {
					b.Fatal(err)
				}
				run(b, cg)
				b.StopTimer() // the teardown is at the attempt's end: CreateAddDelete has it
				if err := cg.Kill(context.Background()); err != nil {
					b.Fatal(err)
				}
				if err := deleteWhenEmpty(cg); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
