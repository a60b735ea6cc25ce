package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// BenchmarkStart times what a job start pays once per process: the job
// helper running /bin/true, and the remote shell's start (`rsh` outside a
// job, which exits at once), from the whole shoal binary and from
// shoal-exec, both built here:
//
//	go test -run '^$' -bench Start -benchtime 200x ./cmd/shoal-exec/
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
