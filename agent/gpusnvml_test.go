package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
	"golang.org/x/sys/unix"
)

// testHost is the host facts of testcluster's default node, for a
// probe.ScanStatic whose GPUs come from a fake NVML.
type testHost struct{ st nodestate.Static }

func (h testHost) HostStatic(context.Context) (nodestate.Static, error) { return h.st, nil }

// TestMIGInstancesAreBoundByUUID: a node whose NVML shows a GPU in MIG
// mode schedules its MIG instances, and two one-GPU jobs there each get
// one instance, named by its UUID in CUDA_VISIBLE_DEVICES (CUDA takes no
// number for a MIG instance). NVML is the fake at the boundary this
// machine cannot give (probe.FakeNVMLMIG: three instances and a whole
// GPU); the inventory is probe.ScanStatic's, as an agent scans its node.
func TestMIGInstancesAreBoundByUUID(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.Static = nvmlStatic(t, cfg.Name, probe.FakeNVMLMIG()) })
	dir := t.TempDir()
	script := `echo "$CUDA_VISIBLE_DEVICES" > "out.$SHOAL_JOB_ID.tmp"; mv "out.$SHOAL_JOB_ID.tmp" "out.$SHOAL_JOB_ID"; ` +
		`while [ ! -e release ]; do sleep 0.05; done`
	ids := submitOneGPUJobs(t, c, dir, script, "mig-a", "mig-b")
	var seen []string
	testcluster.WaitFor(t, 2*time.Minute, "both jobs to say what they see", func() bool {
		seen = seen[:0]
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(dir, "out."+strconv.FormatUint(id, 10)))
			if err != nil {
				return false
			}
			seen = append(seen, strings.TrimSpace(string(b)))
		}
		return true
	}, func() string { return strings.Join(seen, " ") })
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	slices.Sort(seen)
	want := []string{"MIG-fake0000-0000-0000-0000-000000000000", "MIG-fake0000-0000-0000-0000-000000000002"}
	if !slices.Equal(seen, want) {
		t.Errorf("the two jobs see CUDA_VISIBLE_DEVICES %q, want one MIG instance each, by UUID: %q", seen, want)
	}
	waitJobsDone(t, c, ids)
}

// TestGPUDeviceRulesFollowNVMLMinors: where NVML numbers a node's GPUs
// otherwise than the driver's /dev/nvidiaN (GPU 0 is /dev/nvidia1 here),
// a job holding GPU 0 may open /dev/nvidia1 and not /dev/nvidia0. NVML is
// the fake at the boundary this machine cannot give (probe.FakeNVML with
// swapped minors); the device nodes are real character devices made with
// mknod, with no driver behind them, as in
// TestGPUDeviceRulesKeepJobsOffOtherGPUs.
func TestGPUDeviceRulesFollowNVMLMinors(t *testing.T) {
	t.Parallel()
	deviceRulesOrSkip(t)
	devDir := t.TempDir()
	for i := range 2 {
		if err := unix.Mknod(filepath.Join(devDir, "nvidia"+strconv.Itoa(i)), unix.S_IFCHR|0o666, int(unix.Mkdev(confine.NvidiaMajor, uint32(i)))); err != nil {
			t.Skipf("make a fake GPU device node: %v", err)
		}
	}
	lib := probe.FakeNVMLTwoGPUs()
	lib.GPUs[0].MinorV, lib.GPUs[1].MinorV = 1, 0
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		cfg.Static = nvmlStatic(t, cfg.Name, lib)
		cfg.Testing.GPUDevDir = devDir
	})
	dir := t.TempDir()
	script := `{ echo "$CUDA_VISIBLE_DEVICES"; for g in 0 1; do echo "$( (: < ` + devDir + `/nvidia$g) 2>&1 )"; done; } > out.tmp; mv out.tmp out`
	spec := api.JobSpec{Cmd: []string{"/bin/sh", "-c", script}, NP: 1, MPI: "none", Workdir: dir, Force: true,
		PEs: []api.PENeed{{Kind: "gpu", PerProc: 1}}}
	if _, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: "minor", Owner: "root", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	testcluster.WaitFor(t, 2*time.Minute, "the job to say what it could open", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "out"))
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		return err == nil
	})
	const reached, refused = "No such device or address", "Operation not permitted"
	if len(lines) != 3 || lines[0] != "0" || !strings.HasSuffix(lines[1], refused) || !strings.HasSuffix(lines[2], reached) {
		t.Errorf("the job holding GPU 0 (/dev/nvidia1 to NVML) wrote %q, want 0, nvidia0 %q, nvidia1 %q", lines, refused, reached)
	}
}

// nvmlStatic is testcluster's default node with the GPUs probe.ScanStatic
// finds through lib, as an agent scans its node.
func nvmlStatic(t *testing.T, name string, lib probe.NVML) *probe.Static {
	t.Helper()
	base := testcluster.DefaultStatic(name)
	scanned, err := probe.ScanStatic(context.Background(), probe.StaticConfig{
		Host: testHost{base.Static}, NVML: lib, Runner: probe.ExecRunner{}, NvidiaSMI: "shoal-no-nvidia-smi",
		SysFS: fstest.MapFS{},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pe := range scanned.PEs {
		if pe.Kind == "gpu" {
			base.PEs = append(base.PEs, pe)
		}
	}
	base.GPUs = scanned.GPUs
	return base
}
