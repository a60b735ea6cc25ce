package jobexec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ownCgroup2 is the directory of this process's cgroup in a cgroup2
// hierarchy (the unified one, or the empty one a hybrid machine mounts at
// /sys/fs/cgroup/unified): joining a cgroup there needs no controller.
func ownCgroup2(t *testing.T) string {
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
