package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDelegatedRootMovesALoneAgentIntoItsLeaf: under systemd's Delegate=yes
// without DelegateSubgroup= (systemd before 254) the agent starts alone in
// the service's cgroup, where cgroup v2 would refuse to enable controllers
// for its jobs; it moves into a leaf below and its jobs' parent goes
// beside it. An agent that shares its cgroup (a login session's) stays.
func TestDelegatedRootMovesALoneAgentIntoItsLeaf(t *testing.T) {
	mount := "/sys/fs/cgroup/unified"
	if b, err := os.ReadFile("/proc/self/mountinfo"); err != nil || !strings.Contains(string(b), " /sys/fs/cgroup ") && !strings.Contains(string(b), " "+mount+" ") {
		t.Skip("no cgroup filesystem")
	}
	if _, err := os.Stat(filepath.Join(mount, "cgroup.procs")); err != nil {
		mount = "/sys/fs/cgroup"
		if _, err := os.Stat(filepath.Join(mount, "cgroup.subtree_control")); err != nil {
			t.Skip("no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified")
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make cgroups")
	}
	sleeper := func(cg string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if err := os.WriteFile(filepath.Join(mount, cg, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	cgroupOf := func(pid int) string {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "0::"); ok {
				return v
			}
		}
		return ""
	}
	mk := func(name string) string {
		t.Helper()
		cg := "/shoal-leaftest-" + strconv.Itoa(os.Getpid()) + "-" + name
		if err := os.Mkdir(filepath.Join(mount, cg), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(filepath.Join(mount, cg, agentLeaf)); _ = os.Remove(filepath.Join(mount, cg)) })
		return cg
	}

	alone := mk("alone")
	agent := sleeper(alone)
	root, err := delegatedRoot(mount, alone, agent.Process.Pid)
	if err != nil || root != alone {
		t.Fatalf("delegatedRoot(alone) = %q, %v; want %q", root, err, alone)
	}
	if got := cgroupOf(agent.Process.Pid); got != alone+"/"+agentLeaf {
		t.Fatalf("the agent is in %q, want its leaf %s/%s", got, alone, agentLeaf)
	}
	// Already in the leaf (systemd's DelegateSubgroup=, or a second open):
	// the delegated cgroup is the one above.
	if root, err := delegatedRoot(mount, alone+"/"+agentLeaf, agent.Process.Pid); err != nil || root != alone {
		t.Fatalf("delegatedRoot(leaf) = %q, %v; want %q", root, err, alone)
	}

	shared := mk("shared")
	agent2, other := sleeper(shared), sleeper(shared)
	if root, err := delegatedRoot(mount, shared, agent2.Process.Pid); err != nil || root != shared {
		t.Fatalf("delegatedRoot(shared) = %q, %v; want %q", root, err, shared)
	}
	if got := cgroupOf(agent2.Process.Pid); got != shared {
		t.Fatalf("an agent sharing its cgroup with %d was moved to %q", other.Process.Pid, got)
	}
}
