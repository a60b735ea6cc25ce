package jobrun

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// A restarted agent kills and removes the attempts' cgroups its last life
// left, with every process in them.
func TestLeftoverCgroupsAreRemoved(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	dataDir := t.TempDir()
	m, err := OpenCgroups("n0", dataDir, confine.DefaultConfig())
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	cg, err := m.New(cgroupName(Key{Job: 9, Attempt: 1}), confine.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // on failure too: kill and delete what is left (no-ops once removed)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cg.Kill(ctx)
		_ = cg.Delete()
	})
	sleeper := exec.Command("sleep", "300")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = sleeper.Wait(); close(exited) }()
	t.Cleanup(func() { _ = sleeper.Process.Kill() })
	if err := cg.Add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}

	n := testNode(t, raftfsm.New(), func() {})
	n.cfg.Cgroups, n.cfg.DataDir = m, dataDir
	n.removeLeftoverCgroups(nil)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the process in the leftover cgroup is still running")
	}
	if names, err := m.List(); err != nil || len(names) != 0 {
		t.Fatalf("cgroups left: %v %v", names, err)
	}
}

// A node without cgroups refuses a job with a memory limit and says why;
// one without a limit runs unconfined.
func TestUnconfinedNodeRefusesMemoryLimits(t *testing.T) {
	t.Parallel()
	n := testNode(t, raftfsm.New(), func() {})
	n.cfg.CgroupsOff = "not root"
	j := &raftfsm.Job{ID: 1, Attempt: 1, Spec: raftfsm.JobSpec{NP: 1, MemPerNode: 1 << 20},
		Attempts: []raftfsm.Attempt{{N: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}}}}
	if _, err := n.cgroupDirs(j, Key{Job: 1, Attempt: 1}); err == nil {
		t.Fatal("a node without cgroups accepted a job with a memory limit")
	} else {
		t.Log(err)
	}
	j.Spec.MemPerNode = 0
	if dirs, err := n.cgroupDirs(j, Key{Job: 1, Attempt: 1}); err != nil || dirs != nil {
		t.Fatalf("a job without a limit on a node without cgroups: %v %v, want unconfined", dirs, err)
	}
}

// An attempt's cgroup limits deny the node's GPUs the attempt does not
// hold there, and all of them to one that holds none; a node whose GPUs
// are bound by environment only (no device numbers) denies nothing.
func TestLimitsDenyTheGPUsAnAttemptDoesNotHold(t *testing.T) {
	t.Parallel()
	n := testNode(t, raftfsm.New(), func() {})
	gpus := []confine.Device{{Major: 195, Minor: 0}, {Major: 195, Minor: 1}, {Major: 195, Minor: 2}}
	n.cfg.GPUDevices = [][]confine.Device{gpus[:1], gpus[1:2], gpus[2:]}
	job := func(held ...raftfsm.NodeGPUs) *raftfsm.Job {
		return &raftfsm.Job{Attempt: 1, Attempts: []raftfsm.Attempt{{N: 1,
			Hosts: []raftfsm.Host{{Node: "n0", NP: 1}, {Node: "n1", NP: 1}}, GPUs: held}}}
	}
	for _, tc := range []struct {
		name string
		j    *raftfsm.Job
		want []confine.Device
	}{
		{"holds GPU 1 here", job(raftfsm.NodeGPUs{Node: "n0", Indices: []int{1}}), []confine.Device{gpus[0], gpus[2]}},
		{"holds 0 and 2 here", job(raftfsm.NodeGPUs{Node: "n0", Indices: []int{0, 2}}), []confine.Device{gpus[1]}},
		{"holds GPU 0 on another node only", job(raftfsm.NodeGPUs{Node: "n1", Indices: []int{0}}), gpus},
		{"holds none", job(), gpus},
	} {
		if got := n.limitsOn(tc.j).DenyDevices; !slices.Equal(got, tc.want) {
			t.Errorf("%s: denies %v, want %v", tc.name, got, tc.want)
		}
	}
	n.cfg.GPUDevices = nil
	if got := n.limitsOn(job()).DenyDevices; got != nil {
		t.Errorf("a node without device numbers denies %v, want nothing", got)
	}
}
