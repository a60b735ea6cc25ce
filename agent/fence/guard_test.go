package fence

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/internal/procstat"
)

// procState is the one-letter state of pid (/proc/PID/stat): T when stopped.
func procState(t *testing.T, pid int) string {
	t.Helper()
	st, err := procstat.Read(pid)
	if err != nil {
		t.Fatal(err)
	}
	return string(st.State)
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond) // the polling period of a condition
	}
}

// A guard stops the listed process group once the lease lapses, not
// before, continues it once the lease is renewed, and exits when the
// lease is removed; a second guard of the same directory exits at once.
func TestGuardStopsProcessesOnceTheLeaseLapses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	job := exec.Command("sleep", "60")
	job.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = job.Process.Kill(); _ = job.Wait() })
	pid := job.Process.Pid

	lapse := 700 * time.Millisecond
	if err := Write(dir, Lease{Until: Deadline(lapse), Pgids: []int{pid}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	guard := exec.Command("/proc/self/exe")
	guard.Args = []string{Arg0, dir}
	guard.Stderr = os.Stderr
	if err := guard.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- guard.Wait() }()
	t.Cleanup(func() { _ = Remove(dir); _ = guard.Process.Kill() })

	waitFor(t, 30*time.Second, "the guard never stopped the job", func() bool { return procState(t, pid) == "T" })
	if held := time.Since(start); held < lapse {
		t.Fatalf("stopped after %v, before the lease's %v lapsed", held, lapse)
	}

	if !guardRunning(dir) {
		t.Fatal("guardRunning: false while the guard runs")
	}
	second := exec.Command("/proc/self/exe")
	second.Args = []string{Arg0, dir}
	if err := second.Run(); err != nil {
		t.Fatalf("a second guard of one directory: %v, want exit 0 at once", err)
	}

	if err := Write(dir, Lease{Until: Deadline(time.Hour), Pgids: []int{pid}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the guard never continued the job after a renewal", func() bool { return procState(t, pid) != "T" })

	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("guard: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the guard did not exit once the lease was removed")
	}
	if guardRunning(dir) {
		t.Fatal("guardRunning: true after the guard exited")
	}
}

// A lapsed lease freezes the listed cgroup freezers; a renewal thaws them.
func TestGuardStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := Freezer{File: filepath.Join(dir, "freezer.state"), Freeze: "FROZEN", Thaw: "THAWED"}
	read := func() string { b, _ := os.ReadFile(f.File); return string(b) }
	g := newGuard(discard())
	g.step(Lease{Until: 100, Freezers: []Freezer{f}}, 99)
	if got := read(); got != "" {
		t.Fatalf("within the lease: freezer %q, want untouched", got)
	}
	g.step(Lease{Until: 100, Freezers: []Freezer{f}}, 100)
	if got := read(); got != "FROZEN" {
		t.Fatalf("lapsed: freezer %q, want FROZEN", got)
	}
	g.step(Lease{Until: 300}, 200)
	if got := read(); got != "THAWED" {
		t.Fatalf("renewed: freezer %q, want THAWED", got)
	}
}
