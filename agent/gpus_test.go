package agent_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/confine"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/testcluster"
	"golang.org/x/sys/unix"
)

// twoGPUCluster is a job cluster of n agents whose inventories each
// declare two GPUs: a fake at the boundary this machine cannot give (no
// device exists); what tests on it check is which indices shoal hands out.
func twoGPUCluster(t *testing.T, n int) *testcluster.Cluster {
	t.Helper()
	return jobCluster(t, n, func(_ int, cfg *agent.Config) {
		st := testcluster.DefaultStatic(cfg.Name)
		st.PEs = append(st.PEs, nodestate.PE{Kind: "gpu", Model: "fake GPU, no device", Count: 2})
		cfg.Static = st
	})
}

// TestGPUsAreBoundPerJob: on a node with two GPUs, two jobs of one GPU
// each, running at once, see one GPU each and not the same one; a job
// that asked for none sees none. The GPUs are a fake at the boundary
// this machine cannot give (its inventory declares two; no device
// exists): what is under test is which indices shoal hands each job.
func TestGPUsAreBoundPerJob(t *testing.T) {
	t.Parallel()
	c := twoGPUCluster(t, 1)
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
	waitJobsDone(t, c, ids)
}

// submitOneGPUJobs submits, as root, one job per request ID that runs
// script in dir on one process holding one GPU, and returns their IDs.
func submitOneGPUJobs(t *testing.T, c *testcluster.Cluster, dir, script string, reqs ...string) []uint64 {
	t.Helper()
	var ids []uint64
	for _, req := range reqs {
		spec := api.JobSpec{Cmd: []string{"/bin/sh", "-c", script}, NP: 1, MPI: "none", Workdir: dir, Force: true,
			PEs: []api.PENeed{{Kind: "gpu", PerProc: 1}}}
		res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: req, Owner: "root", Spec: spec})
		if err != nil {
			t.Fatalf("submit %s: %v", req, err)
		}
		ids = append(ids, res.ID)
	}
	return ids
}

// waitJobsDone waits for every job of ids to end done.
func waitJobsDone(t *testing.T, c *testcluster.Cluster, ids []uint64) {
	t.Helper()
	for _, id := range ids {
		testcluster.WaitFor(t, time.Minute, "job "+strconv.FormatUint(id, 10)+" to end", func() bool {
			j, err := c.Client(0).Job(context.Background(), id)
			return err == nil && j.State == "done"
		})
	}
}

// deviceRulesOrSkip skips a test on a machine whose cgroups cannot deny
// devices to a job: not root, or neither the v1 devices controller nor
// BPF device programs on v2.
func deviceRulesOrSkip(t *testing.T) {
	t.Helper()
	needRootCgroups(t)
	cfg := confine.DefaultConfig()
	cfg.Parent = fmt.Sprintf("shoal-devcheck-%d", os.Getpid())
	m, err := confine.Open(cfg)
	if err != nil {
		t.Skip("jobs cannot be confined here: " + err.Error())
	}
	sup := m.Support()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !sup.Devices {
		t.Skip(sup.DevicesOff)
	}
}

// TestGPUDeviceRulesKeepJobsOffOtherGPUs: on a node with two GPUs, a job
// bound to one cannot open the other's device node, whatever its
// environment says. The GPUs are a fake at the boundary this machine
// cannot give: the inventory declares two, and the device nodes are
// real character devices 195:0 and 195:1 made with mknod, with no driver
// behind them. An open the job's cgroup allows reaches the driver lookup
// and fails with ENXIO; one it denies fails before that with EPERM.
func TestGPUDeviceRulesKeepJobsOffOtherGPUs(t *testing.T) {
	t.Parallel()
	deviceRulesOrSkip(t)
	devDir := t.TempDir()
	for i := 0; i < 2; i++ {
		if err := unix.Mknod(filepath.Join(devDir, "nvidia"+strconv.Itoa(i)), unix.S_IFCHR|0o666, int(unix.Mkdev(confine.NvidiaMajor, uint32(i)))); err != nil {
			t.Skipf("make a fake GPU device node: %v", err)
		}
	}
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) {
		st := testcluster.DefaultStatic(cfg.Name)
		st.PEs = append(st.PEs, nodestate.PE{Kind: "gpu", Model: "fake GPU, mknod'd nodes, no driver", Count: 2})
		cfg.Static = st
		cfg.Testing.GPUDevDir = devDir
	})
	dir := t.TempDir()
	// Each job writes which GPU it holds and what opening each node gave,
	// then stays until released, so that both hold their GPU at once.
	script := `{ echo "$CUDA_VISIBLE_DEVICES"; for g in 0 1; do echo "$( (: < ` + devDir + `/nvidia$g) 2>&1 )"; done; } > "out.$SHOAL_JOB_ID.tmp"; ` +
		`mv "out.$SHOAL_JOB_ID.tmp" "out.$SHOAL_JOB_ID"; while [ ! -e release ]; do sleep 0.05; done`
	ids := submitOneGPUJobs(t, c, dir, script, "gpu-dev-a", "gpu-dev-b")
	seen := readJobOutputs(t, dir, ids)
	const reached, refused = "No such device or address", "Operation not permitted"
	held := map[string]bool{}
	for _, id := range ids {
		lines := seen[id]
		if len(lines) != 3 {
			t.Fatalf("job %d wrote %q, want its GPU and two opens", id, lines)
		}
		own, err := strconv.Atoi(lines[0])
		if err != nil || own < 0 || own > 1 {
			t.Fatalf("job %d holds CUDA_VISIBLE_DEVICES=%q, want GPU 0 or 1", id, lines[0])
		}
		held[lines[0]] = true
		for g := 0; g < 2; g++ {
			want := refused
			if g == own {
				want = reached
			}
			if !strings.HasSuffix(lines[1+g], want) {
				t.Errorf("job %d holding GPU %d opened GPU %d's node: %q, want %q", id, own, g, lines[1+g], want)
			}
		}
	}
	if len(held) != 2 {
		t.Errorf("the two jobs hold GPUs %v, want one each", held)
	}
	waitJobsDone(t, c, ids)
}

// TestMPIRanksSeeTheirOwnNodesGPUs: every rank of a two-node GPU job sees
// the GPUs the attempt holds on its own node, however its launcher passes
// the head's environment on: MPICH's Hydra forwards all of it unless told
// otherwise, Open MPI what -x names (the job's variables, which may carry a
// submitter's CUDA_VISIBLE_DEVICES), copies nothing; and in a batch script
// an MPICH step with a -genv of its own, and one that sets
// CUDA_VISIBLE_DEVICES itself, which then holds on every node. A one-GPU
// job holds GPU 0 of one node throughout, so each job gets GPU 1 there and
// GPU 0 on the other: the head's indices are not the other node's. The
// GPUs are a fake at the boundary this machine cannot give (each node's
// inventory declares two; no device exists).
func TestMPIRanksSeeTheirOwnNodesGPUs(t *testing.T) {
	t.Parallel()
	c := twoGPUCluster(t, 2)
	dir := t.TempDir()
	gpu := []api.PENeed{{Kind: "gpu", PerProc: 1}}
	submit := func(req string, spec api.JobSpec) uint64 {
		t.Helper()
		spec.Workdir, spec.Force, spec.PEs, spec.Timeout = dir, true, gpu, 2*time.Minute
		res, err := c.Client(0).Submit(context.Background(), api.SubmitRequest{RequestID: req, Owner: "root", Spec: spec})
		if err != nil {
			t.Fatalf("submit %s: %v", req, err)
		}
		return res.ID
	}
	blocker := submit("gpu-blocker", api.JobSpec{Cmd: []string{"/bin/sh", "-c", `while [ ! -e release ]; do sleep 0.05; done`}, NP: 1, MPI: "none"})
	var held api.Job
	testcluster.WaitFor(t, 2*time.Minute, "the one-GPU job to hold a GPU", func() bool {
		var err error
		held, err = c.Client(0).Job(context.Background(), blocker)
		return err == nil && held.State == "running" && len(held.Attempts) > 0 && len(held.Attempts[len(held.Attempts)-1].GPUs) == 1
	}, func() string { return held.State + " / " + held.WaitReason })
	defer func() {
		if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
			t.Error(err)
		}
		waitState(t, c, 0, blocker, time.Minute, "done")
	}()

	// Each rank writes the GPU variables it sees to TAG.NODE.
	rank := filepath.Join(dir, "rank.sh")
	if err := os.WriteFile(rank, []byte(`v="${CUDA_VISIBLE_DEVICES-unset} ${ROCR_VISIBLE_DEVICES-unset} ${ZE_AFFINITY_MASK-unset}`+
		` ${GPU_DEVICE_ORDINAL-unset} ${SHOAL_GPUS-unset} ${SLURM_JOB_GPUS-unset}"
echo "$v" > "$1.$SHOAL_NODE.tmp" && mv "$1.$SHOAL_NODE.tmp" "$1.$SHOAL_NODE"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// What a submitter's exported shell may carry (--export ALL).
	exported := []string{"CUDA_VISIBLE_DEVICES=7", "ZE_AFFINITY_MASK=7"}
	mpich := func() bool { _, err := exec.LookPath("mpiexec.mpich"); return err == nil }()
	ompi := func() bool { _, err := exec.LookPath("mpirun.openmpi"); return err == nil }()
	var missing []string // cases whose MPI launchers are not installed
	for _, tc := range []struct {
		name  string
		needs bool
		spec  api.JobSpec
		// tags are the rank programs' outputs; cuda, when set, is the
		// CUDA_VISIBLE_DEVICES the step sets itself on every node.
		tags []string
		cuda map[string]string
	}{
		{"mpich", mpich, api.JobSpec{Cmd: []string{"/bin/sh", rank, "mpich"}, MPI: "mpich"}, []string{"mpich"}, nil},
		{"openmpi", ompi, api.JobSpec{Cmd: []string{"/bin/sh", rank, "openmpi"}, MPI: "openmpi"}, []string{"openmpi"}, nil},
		{"copies", true, api.JobSpec{Cmd: []string{"/bin/sh", rank, "copies"}, MPI: "none"}, []string{"copies"}, nil},
		{"batch steps", mpich && ompi, api.JobSpec{Batch: true, MPI: "mpich", Cmd: []string{"/bin/sh", "-c",
			`mpiexec.mpich -genv OMP_NUM_THREADS 1 /bin/sh ` + rank + ` step-genv && ` +
				`mpiexec.mpich -genv CUDA_VISIBLE_DEVICES 5 /bin/sh ` + rank + ` step-own && ` +
				`mpirun.openmpi /bin/sh ` + rank + ` step-openmpi`}},
			[]string{"step-genv", "step-own", "step-openmpi"}, map[string]string{"step-own": "5"}},
	} {
		if !tc.needs {
			missing = append(missing, tc.name)
			continue
		}
		spec := tc.spec
		spec.NP, spec.PPN, spec.Env = 2, 1, exported
		id := submit("gpu-ranks-"+tc.name, spec)
		j := waitState(t, c, 0, id, 2*time.Minute, "done", "failed")
		if j.State != "done" {
			var logs strings.Builder
			_ = c.Client(0).Stream(context.Background(), fmt.Sprintf("/v1/jobs/%d/logs?stream=stderr&attempt=%d", id, j.Attempt), &logs)
			t.Fatalf("%s: job %d %s (%s)\nstderr:\n%s", tc.name, id, j.State, j.Reason, logs.String())
		}
		att := j.Attempts[len(j.Attempts)-1]
		own := map[string]string{}
		for _, g := range att.GPUs {
			var ids []string
			for _, i := range g.Indices {
				ids = append(ids, strconv.Itoa(i))
			}
			own[g.Node] = strings.Join(ids, ",")
		}
		if len(own) != 2 || own["n0"] == own["n1"] {
			t.Fatalf("%s: the attempt holds GPUs %v, want one on each node, and not the same index (the one-GPU job holds %+v)",
				tc.name, own, held.Attempts[len(held.Attempts)-1].GPUs)
		}
		for _, tag := range tc.tags {
			for node, list := range own {
				b, err := os.ReadFile(filepath.Join(dir, tag+"."+node))
				if err != nil {
					t.Errorf("%s: no rank wrote what it sees on %s (a rank there that names the head as its node writes the head's file): %v", tag, node, err)
					continue
				}
				cuda := list
				if v, ok := tc.cuda[tag]; ok {
					cuda = v
				}
				want := strings.Join([]string{cuda, list, list, list, list, list}, " ")
				if got := strings.TrimSpace(string(b)); got != want {
					t.Errorf("%s: the rank on %s, which holds GPU %s there, sees %q (CUDA, ROCR, ZE, GPU_DEVICE_ORDINAL, SHOAL_GPUS, SLURM_JOB_GPUS), want %q",
						tag, node, list, got, want)
				}
			}
		}
	}
	if len(missing) > 0 && !t.Failed() {
		t.Skipf("the cases %v did not run: their MPI launchers (MPICH, Open MPI) are not installed", missing)
	}
}
