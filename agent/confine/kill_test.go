package confine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapeScript starts two sleeps that leave the job every way a process
// can without cgroups: a new session (setsid), a double fork (their
// parent, a subshell, exits, so they are reparented), and no SHOAL_*
// variables. It prints its own pid, then theirs, then waits.
const escapeScript = `echo $$
setsid sh -c 'unset SHOAL_PROC SHOAL_JOB; (sleep 600 & echo $!); (sleep 600 & echo $!)' &
wait
exec sleep 600`

func TestKillEndsProcessesThatEscapedTheJob(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) { killEscaped(t, m) })
}

// TestV2KillWithTheFreezer kills through cgroup.freeze, as on kernels
// before 5.14 that have no cgroup.kill.
func TestV2KillWithTheFreezer(t *testing.T) {
	t.Parallel()
	needRoot(t)
	if unifiedMount() == "" {
		t.Skip("cgroup v2: no cgroup2 hierarchy is mounted")
	}
	m := testManager(t, func(c Config) (*Manager, error) { return openV2(c, unifiedMount(), nil) })
	killEscaped(t, m, func(cg *Cgroup) { cg.g.(*v2Group).noKillFile = true })
}

func killEscaped(t *testing.T, m *Manager, tweak ...func(*Cgroup)) {
	cg := newCgroup(t, m, "job-7-0", Limits{})
	for _, f := range tweak {
		f(cg)
	}
	j := startJob(t, cg, escapeScript)
	leader, a, b := j.pid(t), j.pid(t), j.pid(t)
	t.Cleanup(func() {
		// Should Kill fail, the escaped processes must not outlive the test.
		for _, p := range []int{a, b} {
			if !gone(p) {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
	for _, p := range []int{a, b} {
		// The pid is known from the fork; the environment is the new one
		// once sleep is executing.
		if !poll(5*time.Second, func() bool {
			c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			return strings.HasPrefix(string(c), "sleep\x00")
		}) {
			t.Fatalf("process %d never became sleep", p)
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(env), "SHOAL_") || session(t, p) == session(t, leader) {
			t.Fatalf("process %d did not escape: session %d (job's %d), environment %q", p, session(t, p), session(t, leader), env)
		}
	}
	procs, err := cg.Procs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{leader, a, b} {
		if !slices.Contains(procs, p) {
			t.Fatalf("process %d is not in the job's cgroup (it has %v): the helper did not join it before exec", p, procs)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cg.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	j.wait(t, 5*time.Second) // reap the leader; init reaps the orphans
	for _, p := range []int{leader, a, b} {
		if !poll(5*time.Second, func() bool { return gone(p) }) {
			t.Errorf("process %d survived Kill", p)
		}
	}
	if left, err := cg.Procs(); err != nil || len(left) != 0 {
		t.Errorf("after Kill the cgroup holds %v (%v)", left, err)
	}
	u, err := cg.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: usage %+v", m.Support(), u)
	if u.CPUSeconds() <= 0 {
		t.Errorf("usage %+v: want CPU time > 0 for a helper, three shells and three sleeps", u)
	}
	if err := cg.Delete(); err != nil {
		t.Fatal(err)
	}
	for _, d := range cg.Dirs() {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there after Delete: %v", d, err)
		}
	}
}

func TestKillAnEmptyCgroupAndDeleteTwice(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		cg := newCgroup(t, m, "empty", Limits{})
		if err := cg.Kill(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := cg.Delete(); err != nil {
			t.Fatal(err)
		}
		if err := cg.Delete(); err != nil {
			t.Fatalf("second Delete: %v", err)
		}
	})
}

func TestNewRefusesBadNamesAndExistingCgroups(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		newCgroup(t, m, "job-1-0", Limits{})
		if _, err := m.New("job-1-0", Limits{}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("New of an existing cgroup = %v", err)
		}
		for _, bad := range []string{"", ".", "..", "a/b", "../x"} {
			if _, err := m.New(bad, Limits{}); err == nil || !strings.Contains(err.Error(), "one path component") {
				t.Errorf("New(%q) = %v", bad, err)
			}
		}
		for _, l := range []Limits{{CPUs: -1}, {Pids: 4}, {Pids: -1}, {MemoryBytes: 1 << 63}} {
			if _, err := m.New("bad", l); err == nil {
				t.Errorf("New with %+v worked", l)
			}
		}
	})
}

func TestLeftoversOfADeadAgentAreFoundAndKilled(t *testing.T) {
	t.Parallel()
	eachHierarchy(t, func(t *testing.T, m *Manager) {
		cg := newCgroup(t, m, "job-5-0", Limits{})
		j := startJob(t, cg, "echo $$; exec sleep 600")
		pid := j.pid(t)
		m2 := reopen(t, m)
		names, err := m2.List()
		if err != nil || !slices.Equal(names, []string{"job-5-0"}) {
			t.Fatalf("List = %v, %v; want [job-5-0]", names, err)
		}
		left, err := m2.Load("job-5-0")
		if err != nil {
			t.Fatal(err)
		}
		if procs, err := left.Procs(); err != nil || !slices.Equal(procs, []int{pid}) {
			t.Fatalf("the leftover cgroup holds %v, %v; want [%d]", procs, err, pid)
		}
		if err := left.Kill(context.Background()); err != nil {
			t.Fatal(err)
		}
		j.wait(t, 5*time.Second)
		if err := left.Delete(); err != nil {
			t.Fatal(err)
		}
		if names, err := m2.List(); err != nil || len(names) != 0 {
			t.Errorf("after Delete, List = %v, %v", names, err)
		}
		if _, err := m2.Load("job-5-0"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load of a deleted cgroup = %v, want not exist", err)
		}
	})
}
