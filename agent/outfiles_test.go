package agent_test

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// The writers of --output and --error files, attacked by the job's owner.

// tracer is a job that looks for processes of its own user outside its
// own cgroup and attaches to each with ptrace, which is all it takes to
// make such a process start anything, beyond the attempt's memory limit,
// CPU quota, accounting and kill. It prints every such process, traced or
// not: Yama's ptrace_scope 1 or more refuses the attach on many machines,
// and a process there is one the owner may take over where Yama is off.
const tracer = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
me, mine = os.getuid(), open("/proc/self/cgroup").read()
found = []
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        if os.stat("/proc/" + p).st_uid != me or open("/proc/" + p + "/cgroup").read() == mine:
            continue
        exe = os.readlink("/proc/" + p + "/exe")
    except OSError:
        continue
    pid = int(p)
    how = "traced"
    if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        os.waitpid(pid, 0x40000000)      # __WALL
        libc.ptrace(17, pid, 0, 0)       # PTRACE_DETACH
    else:
        how = "not traced: " + os.strerror(ctypes.get_errno())
    found.append("%d %s (%s)" % (pid, exe, how))
print("mine outside my cgroup: " + (", ".join(found) if found else "nothing"), flush=True)
`

// TestOutputWriterIsNotTheOwners is the escape through the job's own
// output writer: with --output, a job of a user's must find no process of
// that user's outside its cgroup to take over. The job runs as "games", a
// user no other test runs processes as, so what it finds is its own.
func TestOutputWriterIsNotTheOwners(t *testing.T) {
	t.Parallel()
	needRootCgroups(t)
	u, err := user.Lookup("games")
	if err != nil {
		t.Skip("needs the user games")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3")
	}
	c := jobCluster(t, 1, nil)
	if ok, why := c.Agent(0).Confined(); !ok {
		t.Fatalf("the agent does not confine: %s", why)
	}
	uid, gid := ids(u)
	work := mkdirOwned(t, filepath.Join(sharedDir(t), "work"), 0o755, uid, gid)
	id := submitAs(t, c, "games", api.JobSpec{Workdir: work, Output: "out-%j.txt",
		Cmd: []string{"/usr/bin/python3", "-c", tracer}})
	j := waitState(t, c, 0, id, time.Minute, "done", "failed")
	if j.State != "done" {
		t.Fatalf("job %s: %s", j.State, j.Reason)
	}
	b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("out-%d.txt", id)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "mine outside my cgroup: nothing" {
		t.Errorf("a job of games' found processes of games' outside its cgroup, which it may take over: %q", got)
	}
}

// TestOutputFileAttacks: small attacks on --output. A file the owner may
// not write fails the job with the reason (it used to be reported done, the
// writer's complaint buried in the log); a pattern that looks like an
// option is a file name; a root job's --output in a directory a user may
// write follows none of that user's links.
func TestOutputFileAttacks(t *testing.T) {
	t.Parallel()
	nobody := needNobody(t)
	uid, gid := ids(nobody)
	c := jobCluster(t, 1, nil)
	base := sharedDir(t)
	work := mkdirOwned(t, filepath.Join(base, "work"), 0o755, uid, gid)
	rootDir := filepath.Join(base, "root-only")
	if err := os.Mkdir(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	echo := []string{"/bin/sh", "-c", "echo out-line"}

	t.Run("unwritable output fails the job", func(t *testing.T) {
		id := submitAs(t, c, "nobody", api.JobSpec{Workdir: work, Output: filepath.Join(rootDir, "o-%j.txt"), Cmd: echo})
		j := waitState(t, c, 0, id, time.Minute, "done", "failed")
		want := fmt.Sprintf("user nobody (uid %d) cannot write %s: permission denied", uid, filepath.Join(rootDir, fmt.Sprintf("o-%d.txt", id)))
		if j.State != "failed" || !strings.Contains(j.Reason, want) {
			t.Errorf("job with an --output nobody may not write: %s (%q), want failed with %q", j.State, j.Reason, want)
		}
	})

	t.Run("output that cannot be written fails the job", func(t *testing.T) {
		id := submitAs(t, c, "nobody", api.JobSpec{Workdir: work, Output: "/dev/full", Cmd: echo})
		j := waitState(t, c, 0, id, time.Minute, "done", "failed")
		if want := "write /dev/full: no space left on device"; j.State != "failed" || !strings.Contains(j.Reason, want) {
			t.Errorf("job whose --output is /dev/full: %s (%q), want failed with %q", j.State, j.Reason, want)
		}
	})

	t.Run("an option-like pattern is a file name", func(t *testing.T) {
		id := submitAs(t, c, "nobody", api.JobSpec{Workdir: work, Output: "-a", Cmd: echo})
		if j := waitState(t, c, 0, id, time.Minute, "done", "failed"); j.State != "done" {
			t.Fatalf("job %s: %s", j.State, j.Reason)
		}
		if b, err := os.ReadFile(filepath.Join(work, "-a")); err != nil || string(b) != "out-line\n" {
			t.Errorf("--output -a: file %q, %v; want the job's output in a file named -a", b, err)
		}
	})

	t.Run("a root job's output follows no user link", func(t *testing.T) {
		target := filepath.Join(rootDir, "shadow")
		if err := os.WriteFile(target, []byte("root's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(work, "root-out.txt")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(link, uid, gid); err != nil {
			t.Fatal(err)
		}
		id := submitAs(t, c, "root", api.JobSpec{Workdir: base, Output: link, Cmd: echo})
		j := waitState(t, c, 0, id, time.Minute, "done", "failed")
		if b, _ := os.ReadFile(target); string(b) != "root's\n" {
			t.Errorf("a root job's --output through nobody's link rewrote root's file: it holds %q", b)
		}
		if j.State != "failed" || !strings.Contains(j.Reason, "root does not follow those") {
			t.Errorf("root job with --output through nobody's link: %s (%q), want failed, the link refused", j.State, j.Reason)
		}
	})
}
