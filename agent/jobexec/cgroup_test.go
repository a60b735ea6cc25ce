package jobexec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ownCgroup2 is the directory of this process's cgroup in a cgroup2
// hierarchy (the unified one, or the empty one a hybrid machine mounts at
// /sys/fs/cgroup/unified): joining a cgroup there needs no controller.
func ownCgroup2(t testing.TB) string {
	t.Helper()
	var mount string
	for _, m := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(m, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			mount = m
		}
	}
	if mount == "" {
		t.Skip("no cgroup2 hierarchy mounted")
	}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return filepath.Join(mount, p)
		}
	}
	t.Skip("no cgroup2 entry in /proc/self/cgroup")
	return ""
}

func TestHelperJoinsTheCgroupBeforeItExecs(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	dir := filepath.Join(ownCgroup2(t), fmt.Sprintf("jobexec-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove the test cgroup: %v", err)
		}
	})
	// The job, already nobody, reads its own cgroup: it was moved there
	// while the helper was still root.
	cmd, err := Command("", Spec{Cred: c, Cgroup: []string{dir}}, []string{"sh", "-c", `id -u; grep '^0::' /proc/self/cgroup`})
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	want := "65534\n0::/" + filepath.Base(dir)
	if got := strings.TrimSpace(out.String()); !strings.HasPrefix(got, "65534\n0::/") || !strings.HasSuffix(got, "/"+filepath.Base(dir)) {
		t.Fatalf("job printed %q, want uid 65534 in a cgroup ending in %s (%q)", got, filepath.Base(dir), want)
	}
}

func TestHelperRefusesACgroupThatIsNot(t *testing.T) {
	t.Parallel()
	c := nobody(t)
	notCgroup := t.TempDir()
	for _, tc := range []struct {
		dir, want string
	}{
		{notCgroup, "join the job's cgroup " + notCgroup + ": open " + notCgroup + "/cgroup.procs: no such file or directory"},
		{"relative/dir", `job cgroup "relative/dir": want a clean absolute directory`},
		{"/sys/fs/cgroup/../cgroup", "want a clean absolute directory"},
	} {
		cmd, err := Command("", Spec{Cred: c, Cgroup: []string{tc.dir}}, []string{"true"})
		if err != nil {
			t.Fatal(err)
		}
		err = Start(cmd)
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Reason, tc.want) {
			t.Errorf("cgroup %s: Start = %v, want a setup error with %q", tc.dir, err, tc.want)
		}
	}
	// A cgroup.procs that is a plain file is not written.
	fake := filepath.Join(notCgroup, "cgroup.procs")
	if err := os.WriteFile(fake, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, err := Command("", Spec{Cgroup: []string{notCgroup}}, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	err = Start(cmd)
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "not a cgroup directory") {
		t.Errorf("a plain directory with cgroup.procs: Start = %v, want \"not a cgroup directory\"", err)
	}
	if b, _ := os.ReadFile(fake); len(b) != 0 {
		t.Errorf("the helper wrote %q into a file that is not a cgroup's", b)
	}
}

// A spec from an agent that knows nothing of cgroups still decodes, and
// an empty Cgroup is left out: old and new agents and helpers agree.
func TestSpecWithoutCgroupIsCompatible(t *testing.T) {
	t.Parallel()
	var s Spec
	if err := json.Unmarshal([]byte(`{"dir":"/","parent":1}`), &s); err != nil || s.Cgroup != nil {
		t.Fatalf("old spec: %+v, %v", s, err)
	}
	b, err := json.Marshal(Spec{Dir: "/"})
	if err != nil || strings.Contains(string(b), "cgroup") {
		t.Fatalf("a spec without a cgroup marshals to %s, %v", b, err)
	}
}

// newCgroup2 makes a cgroup v2 directory below this process's own, or
// skips.
func newCgroup2(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(ownCgroup2(t), fmt.Sprintf("jobexec-%s-%d", name, os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove the test cgroup: %v", err)
		}
	})
	return dir
}

// runInCgroup runs a job that prints its cgroup through the helper and
// returns what it printed and the command.
func runInCgroup(t *testing.T, dir string, ordinary bool) (string, *exec.Cmd) {
	t.Helper()
	cmd, err := Command("", Spec{Cred: nobody(t), Cgroup: []string{dir}}, []string{"sh", "-c", `grep '^0::' /proc/self/cgroup`})
	if err != nil {
		t.Fatal(err)
	}
	if ordinary {
		cmd.SysProcAttr = nil
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), cmd
}

// TestHelperIsBornInItsCgroupV2: on cgroup v2 the helper starts inside
// the job's cgroup (CLONE_INTO_CGROUP) instead of joining it, which
// would cost a grace period of the kernel's cgroup lock; the job is in
// it all the same.
func TestHelperIsBornInItsCgroupV2(t *testing.T) {
	t.Parallel()
	dir := newCgroup2(t, "born")
	got, cmd := runInCgroup(t, dir, false)
	if !strings.HasSuffix(got, "/"+filepath.Base(dir)) {
		t.Errorf("job in cgroup %q, want one ending in %s", got, filepath.Base(dir))
	}
	if !cmd.SysProcAttr.UseCgroupFD {
		t.Error("the helper was not started in its cgroup v2 (no CLONE_INTO_CGROUP)")
	}
}

// TestHelperNotBornInItsCgroupJoinsIt: a helper started outside its
// cgroup v2 (an ordinary start) sees that it is not listed there, and
// joins before it executes the job.
func TestHelperNotBornInItsCgroupJoinsIt(t *testing.T) {
	t.Parallel()
	dir := newCgroup2(t, "joined")
	got, _ := runInCgroup(t, dir, true)
	if !strings.HasSuffix(got, "/"+filepath.Base(dir)) {
		t.Errorf("job in cgroup %q, want one ending in %s: a helper started outside must join", got, filepath.Base(dir))
	}
}

// newCgroups1 makes a cgroup below this process's own in each of the
// job's v1 hierarchies that is mounted, or skips.
func newCgroups1(t testing.TB, name string) []string {
	t.Helper()
	own := map[string]string{}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.SplitN(l, ":", 3); len(f) == 3 {
			own[f[1]] = f[2]
		}
	}
	var dirs []string
	for _, c := range []string{"memory", "cpu", "cpuacct", "freezer", "pids"} {
		p, ok := own[c]
		if !ok {
			continue
		}
		var st unix.Statfs_t
		mount := filepath.Join("/sys/fs/cgroup", c)
		if unix.Statfs(mount, &st) != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
			continue
		}
		dir := filepath.Join(mount, p, fmt.Sprintf("jobexec-%s-%d", name, os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("cannot create a cgroup: %v", err)
		}
		t.Cleanup(func() { _ = os.Remove(dir) })
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		t.Skip("no cgroup v1 hierarchy mounted")
	}
	return dirs
}

// BenchmarkHelperCgroup starts `true` through the helper in a cgroup v2,
// born in it and joining it, and in the job's v1 hierarchies, which it
// joins; unconfined for reference. The starts are 50 ms apart (off the
// clock): back to back, a join reuses the grace period of the one before.
//
//	go test -run '^$' -bench HelperCgroup -benchtime 40x ./agent/jobexec/
func BenchmarkHelperCgroup(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to make cgroups")
	}
	for _, tc := range []struct {
		name     string
		dirs     func(b *testing.B) []string
		ordinary bool
	}{
		{"unconfined", func(*testing.B) []string { return nil }, false},
		{"v2-born", func(b *testing.B) []string { return []string{newCgroup2(b, "born")} }, false},
		{"v2-joined", func(b *testing.B) []string { return []string{newCgroup2(b, "joined")} }, true},
		{"v1-joined", func(b *testing.B) []string { return newCgroups1(b, "v1") }, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dirs := tc.dirs(b)
			for b.Loop() {
				b.StopTimer()
				time.Sleep(50 * time.Millisecond) // spacing, not synchronisation
				cmd, err := Command("", Spec{Cgroup: dirs}, []string{"/bin/true"})
				if err != nil {
					b.Fatal(err)
				}
				if tc.ordinary {
					cmd.SysProcAttr = nil
				}
				b.StartTimer()
				if err := Start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
