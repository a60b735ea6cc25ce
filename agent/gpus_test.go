package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestGPUsAreBoundPerJob: on a node with two GPUs, two jobs of one GPU
// each, running at once, see one GPU each and not the same one; a job
// that asked for none sees none. The GPUs are a fake at the boundary
// this machine cannot give (its inventory declares two; no device
// exists): what is under test is which indices shoal hands each job.
func TestGPUsAreBoundPerJob(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		st := testcluster.DefaultStatic(cfg.Name)
		st.PEs = append(st.PEs, probe.PE{Kind: "gpu", Model: "fake GPU, no device", Count: 2})
		cfg.Static = st
	})
	dir := t.TempDir()
	// Each job writes what it sees, then stays until the test releases
	// them all, so that the two GPU jobs hold their GPUs at once.
	script := `echo "${CUDA_VISIBLE_DEVICES-unset}" > "out.$SHOAL_JOB_ID"; while [ ! -e release ]; do sleep 0.05; done`
	submit := func(req string, gpus int) uint64 {
		spec := api.JobSpec{Cmd: []string{"/bin/sh", "-c", script}, NP: 1, MPI: "none", Workdir: dir, Force: true}
		if gpus > 0 {
			spec.PEs = []api.PENeed{{Kind: "gpu", PerProc: gpus}}
		}
		res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: req, Owner: "root", Spec: spec})
		if err != nil {
			t.Fatalf("submit %s: %v", req, err)
		}
		return res.ID
	}
	// Three GPUs on a node of two: it waits, saying so.
	three := submit("gpu-three", 3)
	ids := []uint64{submit("gpu-a", 1), submit("gpu-b", 1), submit("no-gpu", 0)}
	seen := map[uint64]string{}
	testcluster.WaitFor(t, 2*time.Minute, "the three jobs to say what they see", func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(dir, "out."+strconv.FormatUint(id, 10)))
			if err != nil || !strings.HasSuffix(string(b), "\n") {
				return false
			}
			seen[id] = strings.TrimSpace(string(b))
		}
		return true
	}, func() string { return "seen so far: " + strconv.Itoa(len(seen)) + " jobs" })
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := []string{seen[ids[0]], seen[ids[1]]}
	slices.Sort(got)
	if !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("the two one-GPU jobs see CUDA_VISIBLE_DEVICES %q and %q, want GPU 0 and GPU 1, one each", seen[ids[0]], seen[ids[1]])
	}
	if seen[ids[2]] != "" {
		t.Errorf("a job that asked for no GPU sees CUDA_VISIBLE_DEVICES=%q, want it set and empty", seen[ids[2]])
	}
	var waiting api.Job
	testcluster.WaitFor(t, time.Minute, "the three-GPU job to wait with a reason", func() bool {
		var err error
		waiting, err = c.Client(0).Job(context.Background(), three)
		return err == nil && waiting.State == "queued" && strings.Contains(waiting.WaitReason, "gpu")
	}, func() string { return waiting.State + " / " + waiting.WaitReason + " / " + waiting.Reason })
	j, err := c.Client(0).Job(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if a := j.Attempts[len(j.Attempts)-1]; len(a.GPUs) != 1 || len(a.GPUs[0].Indices) != 1 {
		t.Errorf("job %d's attempt lists GPUs %+v, want one node holding one", ids[0], a.GPUs)
	}
	for _, id := range ids {
		testcluster.WaitFor(t, time.Minute, "job "+strconv.FormatUint(id, 10)+" to end", func() bool {
			j, err := c.Client(0).Job(context.Background(), id)
			return err == nil && j.State == "done"
		})
	}
}
