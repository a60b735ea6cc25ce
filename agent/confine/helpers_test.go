package confine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	cgroups "github.com/containerd/cgroups/v3"
	"github.com/shoal-hpc/shoal/agent/jobexec"
)

// These tests make real cgroups under a parent of their own below the test
// process's cgroup, run real processes in them through the job helper
// (this test binary links agent/jobexec, so /proc/self/exe is the helper),
// and remove every cgroup they made, on failure too.

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
}

// hierarchies are the ways this machine can confine, by name, for
// subtests; a way it cannot is a skip with the reason.
var hierarchies = []struct {
	name string
	open func(Config) (*Manager, error)
}{
	{"v1", openV1},
	{"v2", func(c Config) (*Manager, error) { return openV2(c, unifiedMount(), v2Need) }},
	// cgroup.procs and cgroup.kill are in every cgroup2 group: a hybrid
	// machine's empty unified hierarchy still tests the v2 kill.
	{"v2-no-controllers", func(c Config) (*Manager, error) { return openV2(c, unifiedMount(), nil) }},
}

// unifiedMount is where the cgroup2 hierarchy is, or "".
func unifiedMount() string {
	switch cgroups.Mode() {
	case cgroups.Unified:
		return mountRoot
	case cgroups.Hybrid:
		return mountRoot + "/unified"
	}
	return ""
}

// eachHierarchy runs f in a subtest per hierarchy with a manager of its
// own, skipping the hierarchies this machine does not offer.
func eachHierarchy(t *testing.T, f func(t *testing.T, m *Manager)) {
	for _, h := range hierarchies {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			needRoot(t)
			if h.name != "v1" && unifiedMount() == "" {
				t.Skip("cgroup v2: no cgroup2 hierarchy is mounted")
			}
			f(t, testManager(t, h.open))
		})
	}
}

// testManager opens a manager with a parent cgroup named for the test and
// removes the parent when the test ends (after its cgroups, which register
// their cleanup later and so run first).
func testManager(t testing.TB, open func(Config) (*Manager, error)) *Manager {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Parent = fmt.Sprintf("shoal-test-%d-%s", os.Getpid(), strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
	m, err := open(cfg)
	if err != nil {
		t.Skip(err.Error())
	}
	t.Cleanup(func() {
		for _, d := range m.parentDirs() {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				t.Errorf("remove the test's parent cgroup: %v", err)
			}
		}
	})
	return m
}

// reopen is a second manager with the first's config, as an agent that
// restarted would open.
func reopen(t testing.TB, m *Manager) *Manager {
	t.Helper()
	var m2 *Manager
	var err error
	if m.v1 != nil {
		m2, err = openV1(m.cfg)
	} else {
		m2, err = openV2(m.cfg, m.v2.mount, m.v2.ctrls)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m2
}

// newCgroup makes a cgroup that is killed and deleted when the test ends.
func newCgroup(t testing.TB, m *Manager, name string, l Limits) *Cgroup {
	t.Helper()
	cg, err := m.New(name, l)
	if errors.Is(err, ErrNoController) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cg.Kill(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if err := deleteWhenEmpty(cg); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return cg
}

// deleteWhenEmpty deletes a cgroup whose killed processes may still be on
// their way out.
func deleteWhenEmpty(cg *Cgroup) error {
	var err error
	poll(5*time.Second, func() bool { err = cg.Delete(); return err == nil })
	return err
}

// job is a command started in a cgroup through the job helper, with its
// stdout as lines.
type job struct {
	cmd   *exec.Cmd
	out   *os.File
	lines *bufio.Scanner
	stdin io.WriteCloser
	done  chan error
}

// startJob runs script under sh in cg, as the agent would: the helper joins
// the cgroup, then executes the job with the job's environment.
func startJob(t testing.TB, cg *Cgroup, script string) *job {
	t.Helper()
	var spec jobexec.Spec
	if cg != nil {
		spec.Cgroup = cg.Dirs()
	}
	cmd, err := jobexec.Command("", spec, []string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SHOAL_PROC=7-0-test", "SHOAL_JOB=7"}
	// Our own pipe, not StdoutPipe: Wait would close that under a reader
	// still reading what the job printed before it exited.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout = w
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	err = jobexec.Start(cmd)
	w.Close() // the job has it
	if err != nil {
		t.Fatal(err)
	}
	j := &job{cmd: cmd, out: out, lines: bufio.NewScanner(out), stdin: in, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-j.done
	})
	go func() { j.done <- cmd.Wait() }()
	return j
}

// line reads the job's next line of output.
func (j *job) line(t testing.TB) string {
	t.Helper()
	// Processes the job left behind hold its stdout: a read must not wait
	// for them.
	j.out.SetReadDeadline(time.Now().Add(30 * time.Second))
	if !j.lines.Scan() {
		t.Fatalf("job output ended: %v", j.lines.Err())
	}
	return j.lines.Text()
}

// pid reads a pid the job printed.
func (j *job) pid(t testing.TB) int {
	t.Helper()
	l := j.line(t)
	p, err := strconv.Atoi(l)
	if err != nil {
		t.Fatalf("job printed %q, want a pid", l)
	}
	return p
}

// wait waits for the job to exit.
func (j *job) wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-j.done:
		j.done <- err // for the cleanup
		return err
	case <-time.After(timeout):
		t.Fatalf("job %v still running after %v", jobexec.Argv(j.cmd), timeout)
		return nil
	}
}

// poll checks cond every few milliseconds until it holds or timeout passes.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// gone says whether a process has exited: no /proc entry, or a zombie
// waiting for its parent.
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// session is a process's session id, from /proc/PID/stat.
func session(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	sid, _ := strconv.Atoi(f[3]) // state ppid pgrp session
	return sid
}
