package confine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// touch is a job that allocates n MiB and writes every page of it: dd
// reads /dev/zero into one buffer of that size.
func touch(mib string) string {
	return "dd if=/dev/zero of=/dev/null bs=" + mib + " count=1 iflag=fullblock 2>/dev/null"
}

func TestMemoryLimitOOMKillsOnlyInsideTheCgroup(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		limit := uint64(64 << 20)
		sibling := newCgroup(t, m, "job-8-0", Limits{MemoryBytes: limit})
		greedy := newCgroup(t, m, "job-9-0", Limits{MemoryBytes: limit})
		// The sibling holds 32 MiB while its neighbour runs out.
		s := startJob(t, sibling, touch("32M")+" && echo ready && read x && echo done")
		if got := s.line(t); got != "ready" {
			t.Fatalf("sibling said %q", got)
		}
		g := startJob(t, greedy, touch("200M")+"; echo dd $?")
		// sh survives; dd, the largest process in the cgroup, is killed.
		if got := g.line(t); got != "dd 137" {
			t.Fatalf("the job that allocated 200M past a 64M limit said %q, want dd killed by SIGKILL (137)", got)
		}
		if err := g.wait(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		u, err := greedy.Usage()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: greedy job's usage %+v", m.Support(), u)
		if u.OOMKills < 1 || u.MemoryLimit != limit || u.PeakMemory > limit+(1<<20) {
			t.Errorf("greedy job's usage %+v: want an OOM kill, limit %d, peak at most the limit", u, limit)
		}
		// The sibling was not touched: it finishes normally.
		if _, err := s.stdin.Write([]byte("go\n")); err != nil {
			t.Fatal(err)
		}
		if got := s.line(t); got != "done" {
			t.Fatalf("sibling said %q", got)
		}
		if err := s.wait(t, 10*time.Second); err != nil {
			t.Fatalf("sibling: %v", err)
		}
		if u, err := sibling.Usage(); err != nil || u.OOMKills != 0 {
			t.Errorf("sibling usage %+v, %v: want no OOM kill", u, err)
		}
	})
}

func TestPeakMemoryAndCPUTimeOfAJob(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		cg := newCgroup(t, m, "job-10-0", Limits{MemoryBytes: 1 << 30})
		j := startJob(t, cg, touch("100M"))
		if err := j.wait(t, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		u, err := cg.Usage()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: usage %+v (peak %s)", m.Support(), u, FormatSize(u.PeakMemory))
		if u.PeakMemory < 100<<20 || u.PeakMemory > 150<<20 {
			t.Errorf("a job that touched 100 MiB peaked at %s, want between 100M and 150M", FormatSize(u.PeakMemory))
		}
		if u.CPUSeconds() <= 0 || u.OOMKills != 0 {
			t.Errorf("usage %+v: want CPU time > 0 and no OOM kill", u)
		}
	})
}

// TestCPUQuotaHoldsBusyLoops runs two busy loops under a quota of one CPU
// and of a quarter CPU for two seconds each. On this machine's two cores,
// shared with other work, the loops may get less than their quota, so the
// test asserts the upper bound (120 % of the quota) and logs whether the
// usage was within 20 % of it. The quarter CPU is the case a loaded
// machine still tells apart: unconfined, two loops get more than that.
func TestCPUQuotaHoldsBusyLoops(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		for i, quota := range []float64{1, 0.25} {
			cg := newCgroup(t, m, fmt.Sprintf("job-11-%d", i), Limits{CPUs: quota})
			j := startJob(t, cg, "while :; do :; done & while :; do :; done & echo started; wait")
			j.line(t)
			u0, err := cg.Usage()
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			<-time.After(2 * time.Second) // the measuring window, not a synchronisation
			u1, err := cg.Usage()
			if err != nil {
				t.Fatal(err)
			}
			wall := time.Since(t0)
			if err := cg.Kill(context.Background()); err != nil {
				t.Fatal(err)
			}
			cores := float64(u1.CPU-u0.CPU) / float64(wall)
			within := cores >= 0.8*quota && cores <= 1.2*quota
			t.Logf("%s: two busy loops under a %v-CPU quota used %.2f cores over %v (within ±20%% of the quota: %v), throttled %v",
				m.Support(), quota, cores, wall.Round(time.Millisecond), within, u1.Throttled-u0.Throttled)
			if cores > 1.2*quota || cores <= 0 {
				t.Errorf("two busy loops under a %v-CPU quota used %.2f cores, want at most %.2f", quota, cores, 1.2*quota)
			}
		}
	})
}

func TestPidsLimitAndAdd(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		cg := newCgroup(t, m, "job-12-0", Limits{Pids: MinPids})
		// The shell forks until it cannot, and exits when it cannot:
		// with no limit it would wait for its sleeps.
		j := startJob(t, cg, fmt.Sprintf(`i=0; while [ $i -lt %d ]; do sleep 600 & i=$((i+1)); done; wait`, 2*MinPids))
		if err := j.wait(t, 60*time.Second); err == nil {
			t.Fatal("the shell forked all its sleeps")
		}
		procs, err := cg.Procs()
		if err != nil {
			t.Fatal(err)
		}
		if len(procs) == 0 || len(procs) > MinPids {
			t.Errorf("a cgroup limited to %d processes holds %d", MinPids, len(procs))
		}
		// Add moves a process that is already running.
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		other := newCgroup(t, m, "job-12-1", Limits{})
		if err := other.Add(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if procs, err := other.Procs(); err != nil || !slices.Equal(procs, []int{cmd.Process.Pid}) {
			t.Errorf("after Add the cgroup holds %v, %v; want [%d]", procs, err, cmd.Process.Pid)
		}
	})
}

// An attempt's cgroup weighs as its CPUs' worth of tasks in the scheduler.
func TestCPUWeightFollowsTheCPUs(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		if !m.Support().has("cpu") {
			t.Skip("no cpu controller")
		}
		cg := newCgroup(t, m, "job-13-0", Limits{CPUs: 3})
		file, want := "cpu.weight", "300"
		if m.v1 != nil {
			file, want = "cpu.shares", "3072"
		}
		for _, d := range cg.Dirs() {
			b, err := os.ReadFile(filepath.Join(d, file))
			if err != nil {
				continue // another controller's directory
			}
			if got := strings.TrimSpace(string(b)); got != want {
				t.Errorf("%s/%s = %s, want %s", d, file, got, want)
			}
			return
		}
		t.Fatalf("no %s in %v", file, cg.Dirs())
	})
}
