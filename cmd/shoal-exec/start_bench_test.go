package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// BenchmarkStart times what a job start pays once per process: the job
// helper running /bin/true, and the remote shell's start (`rsh` outside a
// job, which exits at once), from the whole shoal binary and from
// shoal-exec, both built here; and the helper under its supervisor:
//
//	go test -run '^$' -bench Start -benchtime 200x ./cmd/shoal-exec/
//
// The helper's runs also report the CPU the helper and /bin/true took
// (child-cpu-ms/op, user and system, from the benchmark's children's
// rusage): on a machine of C cores, C seconds over it is the most tasks
// a second any scheduler could start through the helper there.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/shoal", "./cmd/shoal-exec")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, name := range []string{"shoal", "shoal-exec"} {
		bin := filepath.Join(dir, name)
		b.Run("helper/"+name, func(b *testing.B) {
			before := childCPU(b)
			for b.Loop() {
				c, err := jobexec.Command(bin, jobexec.Spec{Dir: "/"}, []string{"/bin/true"})
				if err != nil {
					b.Fatal(err)
				}
				if err := jobexec.Start(c); err != nil {
					b.Fatal(err)
				}
				if err := c.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			reportChildCPU(b, before)
		})
		// The same start under the supervisor that lets a single-copy
		// job outlive an agent restart: one more process start and two
		// small files written.
		b.Run("supervised/"+name, func(b *testing.B) {
			state := filepath.Join(b.TempDir(), "supervisor")
			before := childCPU(b)
			for b.Loop() {
				if err := jobexec.PrepareStateDir(state); err != nil {
					b.Fatal(err)
				}
				c, err := jobexec.Command(bin, jobexec.Spec{Dir: "/"}, []string{"/bin/true"})
				if err != nil {
					b.Fatal(err)
				}
				if err := jobexec.Supervise(c, state); err != nil {
					b.Fatal(err)
				}
				if err := jobexec.Start(c); err != nil {
					b.Fatal(err)
				}
				if err := c.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			reportChildCPU(b, before)
		})
		b.Run("rsh/"+name, func(b *testing.B) {
			for b.Loop() {
				c := exec.Command(bin, "rsh", "n1", "true")
				c.Env = []string{"PATH=" + os.Getenv("PATH")} // outside a job: exits 2 at once
				if err := c.Run(); err == nil {
					b.Fatal("rsh outside a job succeeded")
				}
			}
		})
	}
}

// childCPU is the CPU time, user and system, of the benchmark's children
// waited for so far.
func childCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportChildCPU reports the children's CPU since before, per iteration.
func reportChildCPU(b *testing.B, before time.Duration) {
	b.ReportMetric(float64(childCPU(b)-before)/float64(time.Millisecond)/float64(b.N), "child-cpu-ms/op")
}
