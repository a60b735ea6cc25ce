package fence

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/internal/procstat"
)

// startGroup starts a process leading a process group of its own.
func startGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "60")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c
}

// leaderStart is the start time of the leader of c's group.
func leaderStart(t *testing.T, c *exec.Cmd) uint64 {
	t.Helper()
	st, err := procstat.Read(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return st.Start
}

// A lapsed lease stops a group whose leader is still the one the lease
// recorded, and never one whose number now belongs to another process:
// neither a group whose leader exited, nor a group under a number whose
// recorded start time is not its leader's (a reused pid; the test cannot
// make the kernel reuse one, so the lease records an exited process's
// start time beside a live process's number). So with pidfds, and
// through /proc alone where the kernel has none.
func TestGuardNeverSignalsAGroupThatIsNoLongerTheJobs(t *testing.T) {
	t.Parallel()
	for _, noPidfd := range []bool{false, true} {
		t.Run(map[bool]string{false: "pidfd", true: "proc"}[noPidfd], func(t *testing.T) {
			t.Parallel()
			guardSkipsGroupsNoLongerTheJobs(t, noPidfd)
		})
	}
}

func guardSkipsGroupsNoLongerTheJobs(t *testing.T, noPidfd bool) {
	job := startGroup(t)
	exited := startGroup(t)
	exitedStart := leaderStart(t, exited)
	_ = exited.Process.Kill()
	_ = exited.Wait() // reaped: its number is free for any process
	other := startGroup(t)
	reused := exitedStart // the start time a lease recorded under a number now another's
	if leaderStart(t, other) == reused {
		reused-- // both started in one clock tick: an earlier tick, as a reused number's first leader had
	}
	// A process under a recorded number and start time that leads no
	// group (it is in this test's): a leader that left its group.
	member := exec.Command("sleep", "60")
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = member.Process.Kill(); _ = member.Wait() })

	l := Lease{Until: 100, Pgids: []int{exited.Process.Pid, other.Process.Pid, member.Process.Pid, job.Process.Pid}}
	l.Groups = []Group{
		{Pgid: exited.Process.Pid, Start: exitedStart},
		{Pgid: other.Process.Pid, Start: reused}, // the number reused by another process
		{Pgid: member.Process.Pid, Start: leaderStart(t, member)},
		{Pgid: job.Process.Pid, Start: leaderStart(t, job)},
	}
	g := newGuard(discard())
	g.noPidfd = noPidfd
	g.step(l, 100)
	// The job's group is stopped by the same step that would have stopped
	// the other: once it shows stopped, the other would have been too.
	waitFor(t, 30*time.Second, "the guard never stopped the job's group", func() bool { return procState(t, job.Process.Pid) == "T" })
	if s := procState(t, other.Process.Pid); s == "T" {
		t.Error("the guard stopped a process that took the number of the job's exited group leader")
	}
	if s := procState(t, member.Process.Pid); s == "T" {
		t.Error("the guard stopped a process that leads no group")
	}
	for _, p := range l.Groups[:3] {
		if !g.gone[p] {
			t.Errorf("group %+v: not recorded gone", p)
		}
	}

	g.step(Lease{Until: 300, Pgids: l.Pgids, Groups: l.Groups}, 200)
	waitFor(t, 30*time.Second, "the guard never continued the job's group", func() bool { return procState(t, job.Process.Pid) != "T" })
}

// Write records each group's leader's start time when the group is new
// to the lease, and keeps the recorded one for a group already in it.
func TestWriteRecordsLeaderStartTimes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	job := startGroup(t)
	pid := job.Process.Pid
	if err := Write(dir, Lease{Until: 1, Pgids: []int{pid}}); err != nil {
		t.Fatal(err)
	}
	l, _, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Group{{Pgid: pid, Start: leaderStart(t, job)}}; len(l.Groups) != 1 || l.Groups[0] != want[0] {
		t.Fatalf("groups %+v, want %+v", l.Groups, want)
	}

	// A lease that recorded another start time under this number (its
	// leader since replaced) keeps it: the group stays the one first written.
	if err := Write(dir, Lease{Until: 1, Pgids: []int{pid}, Groups: []Group{{Pgid: pid, Start: 7}}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, Lease{Until: 2, Pgids: []int{pid}}); err != nil {
		t.Fatal(err)
	}
	if l, _, _ = Read(dir); len(l.Groups) != 1 || l.Groups[0].Start != 7 {
		t.Fatalf("rewritten lease: groups %+v, want start 7 kept", l.Groups)
	}

	// A lease written without start times (by an earlier version) still
	// reads; the guard reads the start time when it first sees the group.
	if err := os.WriteFile(dir+"/"+leaseFile, []byte(`{"until_ns":5,"pgids":[`+strconv.Itoa(pid)+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	old, ok, err := Read(dir)
	if err != nil || !ok || len(old.Groups) != 0 || len(old.Pgids) != 1 {
		t.Fatalf("lease without groups: %+v, %v, %v", old, ok, err)
	}
	g := newGuard(discard())
	g.step(old, 1)
	if len(g.seen) != 1 || g.seen[0] != (Group{Pgid: pid, Start: leaderStart(t, job)}) {
		t.Fatalf("guard's groups %+v, want the live leader's start time", g.seen)
	}
}
