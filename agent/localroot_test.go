package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/testcluster"
)

// The agent is root, its jobs are not. Each test here is an
// attack a job's owner (uid 65534, nobody) makes on the agent's root
// privileges, or a property a job of theirs must have.

// needNobody skips unless the test can run jobs as another user.
func needNobody(t *testing.T) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: jobs run as their owner only under a root agent")
	}
	u, err := user.LookupId("65534")
	if err != nil {
		t.Skip("needs a user 65534 (nobody)")
	}
	return u
}

// submitAs submits a one-attempt job owned by owner, as root with the token
// may.
func submitAs(t *testing.T, c *testcluster.Cluster, owner string, spec api.JobSpec) uint64 {
	t.Helper()
	spec.MaxAttempts, spec.Oversubscribe = 1, true
	if spec.NP == 0 {
		spec.NP = 1
	}
	if spec.MPI == "" {
		spec.MPI = "none"
	}
	res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{
		RequestID: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), Owner: owner, Spec: spec})
	if err != nil {
		t.Fatalf("submit as %s: %v", owner, err)
	}
	return res.ID
}

// sharedDir is a directory everyone may pass through (t.TempDir's are 0700
// root's), so that a job of nobody's fails only for the reason the test
// sets up.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "shoal-localroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// publicCopy copies an executable into dir, mode 0755 (the go tool builds
// in directories only root may enter), with the shoal-exec beside it,
// which jobs then start through as they do from an installed shoal.
func publicCopy(t *testing.T, src, dir string) string {
	t.Helper()
	copyOne := func(src string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	if exe := filepath.Join(filepath.Dir(src), jobrun.ExecBinName); fileExists(exe) {
		copyOne(exe)
	}
	return copyOne(src)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func mkdirOwned(t *testing.T, path string, mode os.FileMode, uid, gid int) string {
	t.Helper()
	if err := os.Mkdir(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	return path
}

func ids(u *user.User) (int, int) {
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// rootDirUnchanged fails the test if dir is not still root's, 0755 and
// holding only the file "keep".
func rootDirUnchanged(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 0 || st.Gid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("root's %s is now uid %d gid %d mode %v", dir, st.Uid, st.Gid, fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "keep" {
			t.Errorf("root's %s gained %s", dir, e.Name())
		}
	}
}

func TestJobsActAsTheirOwner(t *testing.T) {
	t.Parallel()
	nobody := needNobody(t)
	uid, gid := ids(nobody)
	base := sharedDir(t)
	// Jobs of nobody's run `shoal rsh`: the binary must be theirs to run.
	bin := publicCopy(t, testcluster.BuildShoal(t), base)
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.Bin = bin })
	work := mkdirOwned(t, filepath.Join(base, "work"), 0o755, uid, gid)
	// A target stands for /etc: a root-owned directory nobody may not write.
	newTarget := func(t *testing.T, name string) string {
		target := mkdirOwned(t, filepath.Join(base, name), 0o755, 0, 0)
		if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return target
	}
	failedWith := func(t *testing.T, id uint64, want ...string) {
		t.Helper()
		j := waitState(t, c, 0, id, 30*time.Second, "done", "failed", "killed")
		if j.State != "failed" {
			t.Errorf("job %s, want failed: %s", j.State, describe(j))
		}
		for _, w := range want {
			if !strings.Contains(j.Reason, w) {
				t.Errorf("reason %q lacks %q", j.Reason, w)
			}
		}
	}
	elastic := &api.ElasticSpec{MinNP: 1, MaxNP: 1, Iterations: 10, Deadline: time.Hour}

	// The job's environment names a library for the dynamic loader. The
	// job helper runs as root until it changes identity, so a helper that
	// started with the job's environment loaded nobody's library as root.
	// The library records the uids it was loaded under.
	t.Run("LD_PRELOAD in the job's environment", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("gcc not installed (make deps installs it)")
		}
		dir := mkdirOwned(t, filepath.Join(base, "preload"), 0o777, uid, gid)
		src, lib, seen := filepath.Join(dir, "p.c"), filepath.Join(dir, "p.so"), filepath.Join(dir, "seen")
		code := `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void record(void) {
	FILE *f = fopen("` + seen + `", "a");
	if (f) { fprintf(f, "uid=%d euid=%d\n", (int)getuid(), (int)geteuid()); fclose(f); }
}
`
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
			t.Fatalf("build the preload library: %v: %s", err, out)
		}
		id := submitAs(t, c, nobody.Username, api.JobSpec{Cmd: []string{"true"}, Workdir: work,
			Env: []string{"LD_PRELOAD=" + lib}})
		if j := waitState(t, c, 0, id, 30*time.Second, "done", "failed", "killed"); j.State != "done" {
			t.Fatalf("job %s: %s", j.State, describe(j))
		}
		b, _ := os.ReadFile(seen)
		if strings.Contains(string(b), "uid=0") || strings.Contains(string(b), "euid=0 ") || strings.Contains(string(b), "euid=0\n") {
			t.Fatalf("nobody's LD_PRELOAD library was loaded as root:\n%s", b)
		}
		if !strings.Contains(string(b), fmt.Sprintf("uid=%d euid=%d", uid, uid)) {
			t.Fatalf("the job itself did not get its LD_PRELOAD (its environment was lost):\n%s", b)
		}
	})

	// A .shoal-checkpoints symlink in the job's workdir to a root-owned
	// directory: the agent used to create the checkpoint dir in it as
	// root and chown it to the job's owner.
	t.Run("planted checkpoint symlink", func(t *testing.T) {
		t.Parallel()
		wd := mkdirOwned(t, filepath.Join(work, "planted"), 0o755, uid, gid)
		target := newTarget(t, "target-of-symlink")
		if err := os.Symlink(target, filepath.Join(wd, ".shoal-checkpoints")); err != nil {
			t.Fatal(err)
		}
		id := submitAs(t, c, nobody.Username, api.JobSpec{Cmd: []string{"true"}, Workdir: wd, Elastic: elastic})
		failedWith(t, id, "create checkpoint dir", "permission denied")
		rootDirUnchanged(t, target)
	})

	// --checkpoint-dir naming a directory inside a root-owned one (as
	// /etc/shoal-test-xyz would).
	t.Run("checkpoint dir in root's directory", func(t *testing.T) {
		t.Parallel()
		target := newTarget(t, "target-of-flag")
		e := *elastic
		e.CheckpointDir = filepath.Join(target, "shoal-test-xyz")
		id := submitAs(t, c, nobody.Username, api.JobSpec{Cmd: []string{"true"}, Workdir: work, Elastic: &e})
		failedWith(t, id, "create checkpoint dir "+e.CheckpointDir, "permission denied")
		rootDirUnchanged(t, target)
	})

	// A workdir the owner cannot enter is named, with the
	// directory in its path that stops them, rather than reported as
	// "fork/exec ...: permission denied".
	t.Run("workdir the owner cannot enter", func(t *testing.T) {
		t.Parallel()
		private := mkdirOwned(t, filepath.Join(base, "private"), 0o700, 0, 0)
		wd := mkdirOwned(t, filepath.Join(private, "wd"), 0o777, uid, gid)
		id := submitAs(t, c, nobody.Username, api.JobSpec{Cmd: []string{"true"}, Workdir: wd})
		failedWith(t, id, "working directory "+wd, "user nobody (uid 65534) may not enter "+private, "permission denied")
	})

	// Every job process is in a session of its own, without a controlling
	// terminal: no TIOCSTI into the terminal the agent was started from.
	// It leads the session and its group, which the kill path relies on;
	// a single copy run under its supervisor (this one) is in the
	// supervisor's, which leads both so that the fence guard's and the
	// kill path's signals to the group reach the job through an agent
	// restart.
	t.Run("own session", func(t *testing.T) {
		t.Parallel()
		// /proc/PID/stat: pid (comm) state ppid pgrp session tty_nr ...
		id := submitAs(t, c, nobody.Username, api.JobSpec{Workdir: work, Cmd: []string{"sh", "-c",
			`read -r pid comm state ppid pgrp sid tty rest < /proc/$$/stat; echo "pid=$pid ppid=$ppid pgrp=$pgrp sid=$sid tty=$tty"; ` +
				`if (: </dev/tty) 2>/dev/null; then echo tty=open; else echo tty=none; fi`}})
		if j := waitState(t, c, 0, id, 30*time.Second, "done", "failed", "killed"); j.State != "done" {
			t.Fatalf("%s", describe(j))
		}
		out, _ := logsOf(t, c, 0, id)
		var pid, ppid, pgrp, sid, tty int
		var open string
		if _, err := fmt.Sscanf(out, "pid=%d ppid=%d pgrp=%d sid=%d tty=%d\ntty=%s", &pid, &ppid, &pgrp, &sid, &tty, &open); err != nil {
			t.Fatalf("job printed %q: %v", out, err)
		}
		agentSid, err := unix.Getsid(0) // the test's, the agents' (in-process)
		if err != nil {
			t.Fatal(err)
		}
		leader := pid
		if sid == ppid {
			leader = ppid // its supervisor's session
		}
		if sid != leader || pgrp != leader || sid == agentSid || tty != 0 || open != "none" {
			t.Fatalf("job pid %d (parent %d) is in process group %d, session %d, tty %d, /dev/tty %s; want a session and group its own or its supervisor's, no tty",
				pid, ppid, pgrp, sid, tty, open)
		}
	})

	// The job's owner keeps the directory the MPI launcher's rsh wrapper
	// lives in out of their hands: they cannot rename over the wrapper or
	// plant anything beside it (the old construction chowned the directory
	// to them, then the wrapper by path).
	t.Run("rsh wrapper directory", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("mpiexec.mpich"); err != nil {
			t.Skip("mpiexec.mpich not installed (make deps installs it)")
		}
		// The wrapper of this job is the one that names this agent.
		script := `for w in $(grep -l -F "SHOAL_AGENT_ADDR='$SHOAL_AGENT_ADDR'" "$WRAPDIR"/shoal-job$SHOAL_JOB_ID.$SHOAL_ATTEMPT-*/rsh); do d=$(dirname "$w"); ` +
			`stat -c "wrapper dir uid=%u mode=%a" "$d"; stat -c "wrapper uid=%u mode=%a" "$d/rsh"; ` +
			`if mv "$d/rsh" "$d/moved" 2>/dev/null || ln -s /etc/passwd "$d/planted" 2>/dev/null; then echo attack=worked; else echo attack=refused; fi; done`
		id := submitAs(t, c, nobody.Username, api.JobSpec{Workdir: work, MPI: "mpich", Cmd: []string{"sh", "-c", script},
			Env: []string{"WRAPDIR=" + os.TempDir()}})
		j := waitState(t, c, 0, id, 60*time.Second, "done", "failed", "killed")
		out, errOut := logsOf(t, c, 0, id)
		if j.State != "done" {
			t.Fatalf("%s\nstdout:\n%s\nstderr:\n%s", describe(j), out, errOut)
		}
		want := fmt.Sprintf("wrapper dir uid=0 mode=711\nwrapper uid=%d mode=700\nattack=refused\n", uid)
		if out != want {
			t.Fatalf("job printed\n%s\nwant\n%s", out, want)
		}
	})
}

// TestJobGetsOwnersGroups: a job runs with its owner's supplementary
// groups (group-shared data, GPU device groups such as video and render),
// as a login would, not with none.
func TestJobGetsOwnersGroups(t *testing.T) {
	t.Parallel()
	needNobody(t)
	for _, tool := range []string{"useradd", "groupadd", "userdel", "groupdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s to make a user with a supplementary group", tool)
		}
	}
	name := fmt.Sprintf("shoallr%d", os.Getpid())
	run := func(args ...string) {
		t.Helper()
		if b, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, b)
		}
	}
	run("groupadd", name+"g")
	t.Cleanup(func() { _ = exec.Command("groupdel", name+"g").Run() })
	run("useradd", "--no-create-home", "--no-user-group", "--gid", "nogroup", "--groups", name+"g", "--shell", "/bin/sh", name)
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	g, err := user.LookupGroup(name + "g")
	if err != nil {
		t.Fatal(err)
	}
	c := jobCluster(t, 1, nil)
	id := submitAs(t, c, name, api.JobSpec{Workdir: "/", Cmd: []string{"id", "-G"}})
	if j := waitState(t, c, 0, id, 30*time.Second, "done", "failed", "killed"); j.State != "done" {
		t.Fatalf("%s", describe(j))
	}
	out, _ := logsOf(t, c, 0, id)
	groups := strings.Fields(out)
	if len(groups) == 0 || groups[0] != "65534" || !slices.Contains(groups, g.Gid) {
		t.Fatalf("job's groups %q, want the primary 65534 and the supplementary %s", strings.TrimSpace(out), g.Gid)
	}
}

// TestJobLimitsAreTheSystemsNotTheAgents: an agent started with its open
// files raised (Go raises its soft limit to the hard one), a lowered process
// limit and an OOM score of its own hands none of
// them to its jobs: they start with the system's defaults, the site's
// --job-rlimit values over them, and a normal OOM score. Not parallel: it
// changes the limits and the OOM score of the test process, which runs the
// agent, and puts them back.
func TestJobLimitsAreTheSystemsNotTheAgents(t *testing.T) {
	nobody := needNobody(t)
	b, err := os.ReadFile("/proc/1/limits")
	if err != nil {
		t.Skipf("no /proc/1/limits: %v", err)
	}
	sys, err := jobexec.SystemLimits(string(b))
	if err != nil {
		t.Fatal(err)
	}
	var sysNproc jobexec.Rlimit
	for _, l := range sys {
		if l.Resource == "nproc" {
			sysNproc = l
		}
	}
	if sysNproc.Cur < 1000 || sysNproc.Cur == jobexec.Infinity {
		t.Skipf("PID 1's nproc limit %v leaves no room for a distinct lower one", sysNproc)
	}
	// The agent's own limits and OOM score, as an administrator might have
	// set them. Only soft limits are lowered and the OOM score is raised,
	// not lowered: a root without CAP_SYS_RESOURCE (a container) could not
	// undo anything else, and the helper's reset to 0 is the same write
	// either way.
	var agentNofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &agentNofile); err != nil {
		t.Fatal(err)
	}
	const rlimitNproc = 6 // RLIMIT_NPROC; the syscall package does not name it
	var oldNproc syscall.Rlimit
	if err := syscall.Getrlimit(rlimitNproc, &oldNproc); err != nil {
		t.Fatal(err)
	}
	agentNproc := sysNproc.Cur - 7
	if err := syscall.Setrlimit(rlimitNproc, &syscall.Rlimit{Cur: agentNproc, Max: oldNproc.Max}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(rlimitNproc, &oldNproc) })
	oldOOM, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/self/oom_score_adj", []byte("500"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.WriteFile("/proc/self/oom_score_adj", oldOOM, 0) })

	site, err := jobexec.ParseRlimit("stack=4194304:8388608")
	if err != nil {
		t.Fatal(err)
	}
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.JobLimits = []jobexec.Rlimit{site} })
	id := submitAs(t, c, nobody.Username, api.JobSpec{Workdir: "/", Cmd: []string{"sh", "-c",
		`awk '/^Max open files/ {printf "nofile=%s:%s ", $4, $5} /^Max processes/ {printf "nproc=%s ", $3} ` +
			`/^Max stack size/ {printf "stack=%s:%s ", $4, $5}' /proc/self/limits; echo "oom=$(cat /proc/self/oom_score_adj)"`}})
	if j := waitState(t, c, 0, id, 30*time.Second, "done", "failed", "killed"); j.State != "done" {
		t.Fatalf("%s", describe(j))
	}
	out, _ := logsOf(t, c, 0, id)
	var sysNofile jobexec.Rlimit
	for _, l := range sys {
		if l.Resource == "nofile" {
			sysNofile = l
		}
	}
	// A hard limit above the agent's own needs CAP_SYS_RESOURCE; without
	// it the job gets the agent's hard limit.
	want := fmt.Sprintf("stack=4194304:8388608 nproc=%d nofile=%d:%d oom=0\n", sysNproc.Cur, sysNofile.Cur, min(sysNofile.Max, agentNofile.Max))
	if out != want {
		t.Fatalf("job saw %q, want %q (the agent has nofile %d:%d, nproc %d, oom_score_adj 500)", out, want, agentNofile.Cur, agentNofile.Max, agentNproc)
	}
}
