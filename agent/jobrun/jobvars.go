package jobrun

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// allocationEnv is the description of a job and its allocation every
// process of the attempt gets, named as Slurm users expect (SLURM_* beside them):
// SHOAL_JOB_NAME (the name, or the command's base name), SHOAL_NODELIST
// (compressed, n[01-04]), SHOAL_NTASKS, SHOAL_NNODES, SHOAL_SUBMIT_DIR,
// and for a task of an array SHOAL_ARRAY_JOB_ID and SHOAL_ARRAY_TASK_ID.
func allocationEnv(j *raftfsm.Job, att *raftfsm.Attempt) []string {
	name := j.Spec.Name
	if name == "" && len(j.Spec.Cmd) > 0 {
		name = filepath.Base(j.Spec.Cmd[0]) // a batch script is named for itself at submit
	}
	hosts := make([]string, len(att.Hosts))
	for i, h := range att.Hosts {
		hosts[i] = h.Node
	}
	env := []string{
		"SHOAL_JOB_NAME=" + name,
		"SHOAL_NODELIST=" + jobfmt.CompressHosts(hosts),
		"SHOAL_NTASKS=" + strconv.Itoa(att.NP()),
		"SHOAL_NNODES=" + strconv.Itoa(len(att.Hosts)),
		"SHOAL_SUBMIT_DIR=" + j.Spec.Workdir,
	}
	if j.InArray() {
		env = append(env, "SHOAL_ARRAY_JOB_ID="+strconv.FormatUint(j.ArrayJobID, 10),
			"SHOAL_ARRAY_TASK_ID="+strconv.Itoa(j.ArrayTaskID))
	}
	return append(env, slurmEnv(j, env)...)
}

// slurmEnv is the allocation under the names Slurm gives it, so that a
// Slurm user's script (an array indexing $SLURM_ARRAY_TASK_ID) runs
// unchanged. Only the current names: the legacy SLURM_JOBID and
// SLURM_NODELIST would make Open MPI's mpirun believe it runs under Slurm
// and launch through srun instead of the allocation's remote shell.
func slurmEnv(j *raftfsm.Job, shoal []string) []string {
	names := map[string]string{
		"SHOAL_JOB_NAME": "SLURM_JOB_NAME", "SHOAL_NODELIST": "SLURM_JOB_NODELIST", "SHOAL_NTASKS": "SLURM_NTASKS",
		"SHOAL_NNODES": "SLURM_JOB_NUM_NODES", "SHOAL_SUBMIT_DIR": "SLURM_SUBMIT_DIR",
		"SHOAL_ARRAY_JOB_ID": "SLURM_ARRAY_JOB_ID", "SHOAL_ARRAY_TASK_ID": "SLURM_ARRAY_TASK_ID",
	}
	env := []string{"SLURM_JOB_ID=" + strconv.FormatUint(j.ID, 10)}
	if p := j.Spec.Partition; p != "" {
		env = append(env, "SLURM_JOB_PARTITION="+p)
	}
	for _, kv := range shoal {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := names[k]; ok {
			env = append(env, name+"="+v)
			if name == "SLURM_JOB_NUM_NODES" {
				env = append(env, "SLURM_NNODES="+v) // both names are Slurm's
			}
		}
	}
	if n := j.Spec.CPUsPerRank; n > 0 {
		env = append(env, "SLURM_CPUS_PER_TASK="+strconv.Itoa(n))
	}
	return env
}

// hostfiles are an allocation in the two MPI launchers' formats: MPICH's
// Hydra reads "node:procs" lines, Open MPI's mpirun "node slots=procs".
func hostfiles(att *raftfsm.Attempt) (mpich, openmpi string) {
	var m, o strings.Builder
	for _, h := range att.Hosts {
		m.WriteString(h.Node + ":" + strconv.Itoa(h.NP) + "\n")
		o.WriteString(h.Node + " slots=" + strconv.Itoa(h.NP) + "\n")
	}
	return m.String(), o.String()
}

// StepInput is what the environment of a batch script's MPI launches
// (job steps) depends on.
type StepInput struct {
	// Flavour picks the format of SHOAL_HOSTFILE (Copies: MPICH's).
	Flavour Flavour
	// Wrapper is the attempt's remote shell (shoal rsh with its capability).
	Wrapper string
	// MPICHHosts and OpenMPIHosts are the hostfiles' paths.
	MPICHHosts, OpenMPIHosts string
	Degraded, AllowRoot      bool
}

// prrteBindNone turns off Open MPI 5's (PRRTE's) default binding of each
// rank to a core. PRRTE refuses to start a node's ranks when they outnumber
// its cores, which shoal's placement allows (a degraded or forced
// attempt's slots are not cores), and binds each job's ranks from core 0
// up, so two jobs on a node would share cores while others idle: shoal
// shares nodes between jobs and confines them with cgroup weights and
// quotas, not cpusets. A job that sets the variable, or passes --bind-to,
// keeps its own binding. Open MPI 4 binds only small jobs and oversubscribed
// ones not at all, and is left as it was.
const prrteBindNone = prrteBindVar + "=none"

// prrteBindVar is PRRTE's default binding policy.
const prrteBindVar = "PRTE_MCA_hwloc_default_binding_policy"

// stepEnv makes `mpiexec ./a.out` and `mpirun ./a.out` inside a batch
// script use the allocation without the user naming hosts, as srun does
// inside sbatch: Hydra and Open MPI both read their launcher, remote shell
// and default hostfile from the environment, and both start one process
// per slot of it when no -n is given.
func stepEnv(in StepInput) []string {
	hostfile := in.MPICHHosts
	if in.Flavour == OpenMPI {
		hostfile = in.OpenMPIHosts
	}
	env := []string{
		"SHOAL_HOSTFILE=" + hostfile,
		"HYDRA_LAUNCHER=ssh", "HYDRA_LAUNCHER_EXEC=" + in.Wrapper, "HYDRA_HOST_FILE=" + in.MPICHHosts,
		"OMPI_MCA_plm_rsh_agent=" + in.Wrapper, "OMPI_MCA_plm_rsh_no_tree_spawn=1", "OMPI_MCA_routed=direct",
		"OMPI_MCA_mpi_yield_when_idle=1", "OMPI_MCA_orte_default_hostfile=" + in.OpenMPIHosts,
		// Open MPI 5 launches through PRRTE, which reads its own names: it
		// still maps plm_rsh_agent, but ignores the orte_ hostfile, so
		// mpirun would start every rank on the head. PRRTE has no routed
		// component to choose.
		"PRTE_MCA_plm_ssh_agent=" + in.Wrapper, "PRTE_MCA_plm_ssh_no_tree_spawn=1",
		"PRTE_MCA_prte_default_hostfile=" + in.OpenMPIHosts, prrteBindNone,
	}
	if in.Degraded {
		env = append(env, "OMPI_MCA_rmaps_base_oversubscribe=1", "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe")
	}
	if in.AllowRoot {
		env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			"PRTE_ALLOW_RUN_AS_ROOT=1", "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	return env
}
