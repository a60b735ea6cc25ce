package jobrun

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestBuildLaunch(t *testing.T) {
	t.Parallel()
	two := &raftfsm.Attempt{N: 1, Head: "a", Hosts: []raftfsm.Host{{Node: "a", NP: 2}, {Node: "b", NP: 1}}}
	degraded := &raftfsm.Attempt{N: 2, Head: "a", Hosts: []raftfsm.Host{{Node: "a", NP: 4}}, Degraded: true}
	paths := LaunchPaths{Launcher: "/usr/bin/mpiexec.mpich", Wrapper: "/tmp/shoal-job7.1-x/rsh"}
	ompiPaths := LaunchPaths{Launcher: "/usr/bin/mpirun.openmpi", Wrapper: "/tmp/shoal-job7.1-x/rsh"}
	jobEnv := []string{"SHOAL_NP=3"}
	elasticEnv := []string{"SHOAL_NP=4", "SHOAL_CHECKPOINT_DIR=/w/.shoal-checkpoints/job7-1", "SHOAL_RESTART=1", "SHOAL_ITERATIONS=100"}
	headEnv := []string{"PATH=/usr/bin", "HOME=/home/al", "FOO=1", "SHOAL_NODE=a", "SHOAL_PROC=a-1234:7:1", "FOO=2", "SHOAL_JOB_CAP_FILE=/tmp/shoal-caps-1/job7.1", "SHOAL_AGENT_ADDR=https://127.0.0.1:7948",
		"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1", "ROCR_VISIBLE_DEVICES=1", "ZE_AFFINITY_MASK=1", "GPU_DEVICE_ORDINAL=1", "SHOAL_GPUS=1", "SLURM_JOB_GPUS=1"}
	mpiOmpi := []string{"--mca", "plm_rsh_agent", ompiPaths.Wrapper, "--mca", "plm_rsh_no_tree_spawn", "1",
		"--mca", "routed", "direct", "--mca", "mpi_yield_when_idle", "1"}
	for _, tc := range []struct {
		name     string
		in       LaunchInput
		argv     []string
		copies   []Copy
		errWants string
	}{{
		name: "mpich forwards the head's environment but SHOAL_NODE, the marker and the head's GPUs",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "mpich", Cmd: []string{"./ring", "-n", "5"}}, Attempt: two,
			Paths: paths, JobEnv: jobEnv, HeadEnv: headEnv},
		argv: []string{paths.Launcher, "-launcher", "ssh", "-launcher-exec", paths.Wrapper, "-hosts", "a:2,b:1", "-n", "3",
			"-genvlist", "PATH,HOME,FOO", "./ring", "-n", "5"},
	}, {
		name: "mpich names SHOAL_HOSTFILE with -genv too: -genvlist alone lost it under Hydra",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "mpich", Cmd: []string{"x"}}, Attempt: two,
			Paths: paths, HeadEnv: []string{"A=1", "SHOAL_HOSTFILE=/tmp/shoal-job7.1-x/hosts"}},
		argv: []string{paths.Launcher, "-launcher", "ssh", "-launcher-exec", paths.Wrapper, "-hosts", "a:2,b:1", "-n", "3",
			"-genvlist", "A,SHOAL_HOSTFILE", "-genv", "SHOAL_HOSTFILE", "/tmp/shoal-job7.1-x/hosts", "x"},
	}, {
		name: "mpich ignores degraded and root: hydra has no such flags",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "mpich", Cmd: []string{"x"}}, Attempt: degraded,
			Paths: paths, HeadEnv: []string{"A=1"}, AllowRoot: true},
		argv: []string{paths.Launcher, "-launcher", "ssh", "-launcher-exec", paths.Wrapper, "-hosts", "a:4", "-n", "4",
			"-genvlist", "A", "x"},
	}, {
		name: "open mpi names the job's variables and shoal's with -x",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "openmpi", Cmd: []string{"./ring"}, Env: []string{"OMP_NUM_THREADS=2", "X=a=b"}},
			Attempt: two, Paths: ompiPaths, JobEnv: jobEnv, HeadEnv: headEnv},
		argv: slices.Concat([]string{ompiPaths.Launcher}, mpiOmpi, []string{"--host", "a:2,b:1", "-np", "3",
			"-x", "OMP_NUM_THREADS", "-x", "X", "-x", "SHOAL_NP", "./ring"}),
	}, {
		name: "open mpi forwards no GPU variable of the job's: the head's GPUs replace it there",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "openmpi", Cmd: []string{"./ring"}, Env: []string{"CUDA_VISIBLE_DEVICES=0", "X=1", "SHOAL_GPUS=0"}},
			Attempt: two, Paths: ompiPaths, JobEnv: jobEnv, HeadEnv: headEnv},
		argv: slices.Concat([]string{ompiPaths.Launcher}, mpiOmpi, []string{"--host", "a:2,b:1", "-np", "3",
			"-x", "X", "-x", "SHOAL_NP", "./ring"}),
	}, {
		name: "open mpi oversubscribes a degraded attempt",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "openmpi", Cmd: []string{"./ring"}}, Attempt: degraded,
			Paths: ompiPaths},
		argv: slices.Concat([]string{ompiPaths.Launcher}, mpiOmpi, []string{"--host", "a:4", "-np", "4", "--oversubscribe", "./ring"}),
	}, {
		name: "open mpi as root is told so, after oversubscribe",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "openmpi", Cmd: []string{"./ring"}}, Attempt: degraded,
			Paths: ompiPaths, AllowRoot: true},
		argv: slices.Concat([]string{ompiPaths.Launcher}, mpiOmpi, []string{"--host", "a:4", "-np", "4", "--oversubscribe", "--allow-run-as-root", "./ring"}),
	}, {
		name: "open mpi forwards an elastic job's checkpoint variables",
		in: LaunchInput{Spec: &raftfsm.JobSpec{MPI: "openmpi", Cmd: []string{"./heat"}}, Attempt: degraded,
			Paths: ompiPaths, JobEnv: elasticEnv},
		argv: slices.Concat([]string{ompiPaths.Launcher}, mpiOmpi, []string{"--host", "a:4", "-np", "4", "--oversubscribe",
			"-x", "SHOAL_NP", "-x", "SHOAL_CHECKPOINT_DIR", "-x", "SHOAL_RESTART", "-x", "SHOAL_ITERATIONS", "./heat"}),
	}, {
		name: "copies: one per process, ranks in host order",
		in:   LaunchInput{Spec: &raftfsm.JobSpec{MPI: "none", Cmd: []string{"hostname"}}, Attempt: two, JobEnv: jobEnv},
		copies: []Copy{
			{Node: "a", Argv: []string{"hostname"}, Env: []string{"SHOAL_RANK=0", "SHOAL_SIZE=3", "SHOAL_HOSTS=a,b", "SLURM_PROCID=0", "SHOAL_NP=3"}},
			{Node: "a", Argv: []string{"hostname"}, Env: []string{"SHOAL_RANK=1", "SHOAL_SIZE=3", "SHOAL_HOSTS=a,b", "SLURM_PROCID=1", "SHOAL_NP=3"}},
			{Node: "b", Argv: []string{"hostname"}, Env: []string{"SHOAL_RANK=2", "SHOAL_SIZE=3", "SHOAL_HOSTS=a,b", "SLURM_PROCID=2", "SHOAL_NP=3"}},
		},
	}, {
		name: "no flavour is copies; a degraded attempt just has more per node",
		in:   LaunchInput{Spec: &raftfsm.JobSpec{Cmd: []string{"./step"}}, Attempt: degraded},
		copies: []Copy{
			{Node: "a", Argv: []string{"./step"}, Env: []string{"SHOAL_RANK=0", "SHOAL_SIZE=4", "SHOAL_HOSTS=a", "SLURM_PROCID=0"}},
			{Node: "a", Argv: []string{"./step"}, Env: []string{"SHOAL_RANK=1", "SHOAL_SIZE=4", "SHOAL_HOSTS=a", "SLURM_PROCID=1"}},
			{Node: "a", Argv: []string{"./step"}, Env: []string{"SHOAL_RANK=2", "SHOAL_SIZE=4", "SHOAL_HOSTS=a", "SLURM_PROCID=2"}},
			{Node: "a", Argv: []string{"./step"}, Env: []string{"SHOAL_RANK=3", "SHOAL_SIZE=4", "SHOAL_HOSTS=a", "SLURM_PROCID=3"}},
		},
	}, {
		name:     "an unknown flavour is refused with the ones there are",
		in:       LaunchInput{Spec: &raftfsm.JobSpec{MPI: "lam", Cmd: []string{"x"}}, Attempt: two},
		errWants: `unknown MPI flavour "lam" (want mpich, openmpi or none)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := BuildLaunch(tc.in)
			if tc.errWants != "" {
				if err == nil || err.Error() != tc.errWants {
					t.Fatalf("error %v, want %q", err, tc.errWants)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Argv, tc.argv) {
				t.Errorf("argv\n got %q\nwant %q", got.Argv, tc.argv)
			}
			if !slices.EqualFunc(got.Copies, tc.copies, func(a, b Copy) bool {
				return a.Node == b.Node && slices.Equal(a.Argv, b.Argv) && slices.Equal(a.Env, b.Env)
			}) {
				t.Errorf("copies\n got %q\nwant %q", got.Copies, tc.copies)
			}
		})
	}
}

// What every process of an attempt gets from shoal: the capability and the size, and for an
// elastic job where its checkpoints go and whether it resumes.
func TestJobEnv(t *testing.T) {
	t.Parallel()
	n := testNode(t, raftfsm.New(), func() {})
	submitted := time.Unix(1700000000, 0)
	ran := raftfsm.Attempt{N: 1, StartedAt: submitted.Add(time.Minute), Hosts: []raftfsm.Host{{Node: "a", NP: 2}}}
	placedOnly := raftfsm.Attempt{N: 1, Hosts: []raftfsm.Host{{Node: "a", NP: 2}}}
	second := raftfsm.Attempt{N: 2, Hosts: []raftfsm.Host{{Node: "a", NP: 2}, {Node: "b", NP: 2}}}
	elastic := &raftfsm.ElasticSpec{MinNP: 2, MaxNP: 8, Iterations: 100}
	threeNodes := raftfsm.Attempt{N: 1, Hosts: []raftfsm.Host{{Node: "n01", NP: 2}, {Node: "n02", NP: 2}, {Node: "n03", NP: 2}}}
	for _, tc := range []struct {
		name string
		job  *raftfsm.Job
		att  *raftfsm.Attempt
		want []string
	}{{
		name: "fixed-size job",
		job:  &raftfsm.Job{ID: 7, Spec: raftfsm.JobSpec{Workdir: "/w"}, Attempts: []raftfsm.Attempt{placedOnly}},
		att:  &placedOnly,
		want: []string{"SHOAL_NP=2", "SHOAL_JOB_NAME=", "SHOAL_NODELIST=a", "SHOAL_NTASKS=2", "SHOAL_NNODES=1", "SHOAL_SUBMIT_DIR=/w"},
	}, {
		name: "elastic job, first attempt",
		job:  &raftfsm.Job{ID: 7, SubmittedAt: submitted, Spec: raftfsm.JobSpec{Workdir: "/w", Elastic: elastic}, Attempts: []raftfsm.Attempt{placedOnly}},
		att:  &placedOnly,
		want: []string{"SHOAL_NP=2", "SHOAL_CHECKPOINT_DIR=/w/.shoal-checkpoints/job7-1700000000", "SHOAL_RESTART=0", "SHOAL_ITERATIONS=100", "SHOAL_JOB_NAME=", "SHOAL_NODELIST=a", "SHOAL_NTASKS=2", "SHOAL_NNODES=1", "SHOAL_SUBMIT_DIR=/w"},
	}, {
		name: "elastic job resumed after a resize",
		job:  &raftfsm.Job{ID: 7, SubmittedAt: submitted, Spec: raftfsm.JobSpec{Workdir: "/w", Elastic: elastic}, Attempts: []raftfsm.Attempt{ran, second}},
		att:  &second,
		want: []string{"SHOAL_NP=4", "SHOAL_CHECKPOINT_DIR=/w/.shoal-checkpoints/job7-1700000000", "SHOAL_RESTART=1", "SHOAL_ITERATIONS=100", "SHOAL_JOB_NAME=", "SHOAL_NODELIST=a,b", "SHOAL_NTASKS=4", "SHOAL_NNODES=2", "SHOAL_SUBMIT_DIR=/w"},
	}, {
		name: "elastic job whose first attempt never started does not resume",
		job:  &raftfsm.Job{ID: 7, SubmittedAt: submitted, Spec: raftfsm.JobSpec{Workdir: "/w", Elastic: elastic}, Attempts: []raftfsm.Attempt{placedOnly, second}},
		att:  &second,
		want: []string{"SHOAL_NP=4", "SHOAL_CHECKPOINT_DIR=/w/.shoal-checkpoints/job7-1700000000", "SHOAL_RESTART=0", "SHOAL_ITERATIONS=100", "SHOAL_JOB_NAME=", "SHOAL_NODELIST=a,b", "SHOAL_NTASKS=4", "SHOAL_NNODES=2", "SHOAL_SUBMIT_DIR=/w"},
	}, {
		name: "named task of an array on n01-n03",
		job: &raftfsm.Job{ID: 9, ArrayJobID: 7, ArrayTaskID: 2, Spec: raftfsm.JobSpec{Workdir: "/w", Name: "relax", Cmd: []string{"/bin/app"}},
			Attempts: []raftfsm.Attempt{threeNodes}},
		att: &threeNodes,
		want: []string{"SHOAL_NP=6", "SHOAL_JOB_NAME=relax", "SHOAL_NODELIST=n[01-03]", "SHOAL_NTASKS=6", "SHOAL_NNODES=3",
			"SHOAL_SUBMIT_DIR=/w", "SHOAL_ARRAY_JOB_ID=7", "SHOAL_ARRAY_TASK_ID=2"},
	}, {
		name: "unnamed job: its command's name",
		job:  &raftfsm.Job{ID: 9, Spec: raftfsm.JobSpec{Workdir: "/w", Cmd: []string{"/usr/bin/solver", "in.dat"}}, Attempts: []raftfsm.Attempt{placedOnly}},
		att:  &placedOnly,
		want: []string{"SHOAL_NP=2", "SHOAL_JOB_NAME=solver", "SHOAL_NODELIST=a", "SHOAL_NTASKS=2", "SHOAL_NNODES=1", "SHOAL_SUBMIT_DIR=/w"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := n.jobEnv(tc.job, tc.att, Key{Job: tc.job.ID, Attempt: tc.att.N})
			own := slices.DeleteFunc(slices.Clone(got), func(kv string) bool { return strings.HasPrefix(kv, "SLURM_") })
			if !slices.Equal(own, tc.want) {
				t.Errorf("jobEnv\n got %q\nwant %q", own, tc.want)
			}
			// Slurm's names for the same values, and the job's ID.
			want := []string{fmt.Sprintf("SLURM_JOB_ID=%d", tc.job.ID)}
			slurm := map[string]string{"SHOAL_JOB_NAME": "SLURM_JOB_NAME", "SHOAL_NODELIST": "SLURM_JOB_NODELIST", "SHOAL_NTASKS": "SLURM_NTASKS",
				"SHOAL_SUBMIT_DIR": "SLURM_SUBMIT_DIR", "SHOAL_ARRAY_JOB_ID": "SLURM_ARRAY_JOB_ID", "SHOAL_ARRAY_TASK_ID": "SLURM_ARRAY_TASK_ID"}
			for _, kv := range tc.want {
				k, v, _ := strings.Cut(kv, "=")
				if name, ok := slurm[k]; ok {
					want = append(want, name+"="+v)
				}
				if k == "SHOAL_NNODES" {
					want = append(want, "SLURM_JOB_NUM_NODES="+v, "SLURM_NNODES="+v)
				}
			}
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("jobEnv lacks %s: %q", w, got)
				}
			}
			for _, legacy := range []string{"SLURM_JOBID=", "SLURM_NODELIST="} {
				if slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, legacy) }) {
					t.Errorf("jobEnv sets %s, which makes Open MPI launch through srun: %q", legacy, got)
				}
			}
		})
	}
}

// The launcher's own environment names this node and carries this node's marker, capability
// file, agent address and GPUs; MPICH's forwarding list built from it leaves them out, so every
// rank gets its own node's.
func TestProcessEnvThroughMPICH(t *testing.T) {
	t.Parallel()
	n := testNode(t, raftfsm.New(), func() {})
	n.cfg.GPUs = 2
	job := &raftfsm.Job{ID: 7, Owner: "al", Spec: raftfsm.JobSpec{MPI: "mpich", Cmd: []string{"x"}, Env: []string{"FOO=1"}},
		Attempts: []raftfsm.Attempt{{N: 1, GPUs: []raftfsm.NodeGPUs{{Node: "n0", Indices: []int{1}}, {Node: "n1", Indices: []int{0}}}}}}
	k := Key{Job: 7, Attempt: 1}
	env := append(n.processEnv(job, k, "/home/al", []string{"SHOAL_NP=1"}), CapFileVar+"=/tmp/shoal-caps-1/job7.1")
	if !slices.Contains(env, "SHOAL_NODE=n0") || !slices.Contains(env, n.markerFor(k)) || !slices.Contains(env, "CUDA_VISIBLE_DEVICES=1") {
		t.Fatalf("launcher env %q lacks SHOAL_NODE=n0, the marker or n0's GPU", env)
	}
	l, err := BuildLaunch(LaunchInput{Spec: &job.Spec, Attempt: &raftfsm.Attempt{N: 1, Hosts: []raftfsm.Host{{Node: "n0", NP: 1}}}, HeadEnv: env})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(l.Argv, "-genvlist")
	if i < 0 {
		t.Fatalf("no -genvlist in %q", l.Argv)
	}
	list := strings.Split(l.Argv[i+1], ",")
	for _, name := range slices.Concat([]string{"SHOAL_NODE", procMarker, CapFileVar, "SHOAL_AGENT_ADDR", "SHOAL_AGENT_SOCK"}, gpuVars) {
		if slices.Contains(list, name) {
			t.Errorf("-genvlist %s forwards %s", l.Argv[i+1], name)
		}
	}
	for _, kv := range n.gpuEnv(&job.Attempts[0]) {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(gpuVars, name) {
			t.Errorf("gpuEnv sets %s, which gpuVars does not name: MPICH would forward the head's", name)
		}
	}
	for _, name := range []string{"FOO", "SHOAL_CA_CERTS", "SHOAL_NP", "USER"} {
		if !slices.Contains(list, name) {
			t.Errorf("-genvlist %s does not forward %s", l.Argv[i+1], name)
		}
	}
}

// An MPICH step of a batch script forwards the script's environment but
// the head's SHOAL_NODE, process marker and GPUs, also beside the step's
// own -genv and -env values and its executables' own choices (-envall);
// a step that picks which variables travel to every executable is left
// alone (Hydra refuses a second -genvlist). The launcher's flavour comes from its name or from the file
// it resolves to.
func TestMPICHStepArgs(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/x", "SHOAL_NODE=n0", "SHOAL_PROC=n0-1:2:1", "A=1", "PATH=/y", "SHOAL_HOSTFILE=/h", "SHOAL_JOB_CAP_FILE=/c", "SHOAL_AGENT_ADDR=https://h",
		"CUDA_VISIBLE_DEVICES=1", "SHOAL_GPUS=1", "ROCR_VISIBLE_DEVICES=1"}
	want := []string{"-genvlist", "PATH,A,SHOAL_HOSTFILE"}
	for _, args := range [][]string{{"-n", "2", "./a.out"}, {"-genv", "OMP_NUM_THREADS", "2", "./a.out"},
		{"--genv", "CUDA_VISIBLE_DEVICES", "0", "./a.out"}, {"-n", "1", "-env", "X", "1", "./a.out"}, {"-n", "1", "-envall", "./a.out"}} {
		if got := MPICHStepArgs(env, args); !slices.Equal(got, want) {
			t.Errorf("MPICHStepArgs(%q) = %q, want %q", args, got, want)
		}
	}
	for _, own := range []string{"-genvall", "-genvnone", "-genvlist", "--genvlist", "--genvall"} {
		if got := MPICHStepArgs(env, []string{own, "X", "./a.out"}); got != nil {
			t.Errorf("with %s: %q, want nothing added", own, got)
		}
	}
	for _, tc := range []struct {
		name, resolved string
		want           bool
	}{
		{"mpiexec.mpich", "/usr/bin/mpiexec.mpich", true},
		{"mpiexec", "/usr/bin/mpiexec.hydra", true},
		{"mpirun", "/usr/bin/orterun", false},
		{"mpirun.openmpi", "/usr/bin/orterun", false},
		{"mpiexec", "/usr/bin/mpiexec.openmpi", false},
	} {
		if got := IsMPICHLauncher(tc.name, tc.resolved); got != tc.want {
			t.Errorf("IsMPICHLauncher(%s, %s) = %v, want %v", tc.name, tc.resolved, got, tc.want)
		}
	}
}
