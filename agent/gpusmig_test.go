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
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// testHost is the host facts of testcluster's default node, for a
// probe.ScanStatic whose GPUs come from a fake NVML.
type testHost struct{ st probe.Static }

func (h testHost) HostStatic(context.Context) (probe.Static, error) { return h.st, nil }

// TestMIGInstancesAreBoundByUUID: a node whose NVML shows a GPU in MIG
// mode schedules its MIG instances, and two one-GPU jobs there each get
// one instance, named by its UUID in CUDA_VISIBLE_DEVICES (CUDA takes no
// number for a MIG instance). NVML is the fake at the boundary this
// machine cannot give (probe.FakeNVMLMIG: three instances and a whole
// GPU); the inventory is probe.ScanStatic's, as an agent scans its node.
func TestMIGInstancesAreBoundByUUID(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		base := testcluster.DefaultStatic(cfg.Name)
		scanned, err := probe.ScanStatic(context.Background(), probe.StaticConfig{
			Host: testHost{*base}, NVML: probe.FakeNVMLMIG(), Runner: probe.ExecRunner{}, NvidiaSMI: "shoal-no-nvidia-smi",
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
		cfg.Static = base
	})
	dir := t.TempDir()
	script := `echo "$CUDA_VISIBLE_DEVICES" > "out.$SHOAL_JOB_ID.tmp"; mv "out.$SHOAL_JOB_ID.tmp" "out.$SHOAL_JOB_ID"; ` +
		`while [ ! -e release ]; do sleep 0.05; done`
	var ids []uint64
	for _, req := range []string{"mig-a", "mig-b"} {
		spec := api.JobSpec{Cmd: []string{"/bin/sh", "-c", script}, NP: 1, MPI: "none", Workdir: dir, Force: true,
			PEs: []api.PENeed{{Kind: "gpu", PerProc: 1}}}
		res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: req, Owner: "root", Spec: spec})
		if err != nil {
			t.Fatalf("submit %s: %v", req, err)
		}
		ids = append(ids, res.ID)
	}
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
	for _, id := range ids {
		testcluster.WaitFor(t, time.Minute, "job "+strconv.FormatUint(id, 10)+" to end", func() bool {
			j, err := c.Client(0).Job(context.Background(), id)
			return err == nil && j.State == "done"
		})
	}
}
