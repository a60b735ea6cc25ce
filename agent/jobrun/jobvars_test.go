package jobrun

import (
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/raftfsm"
)

func TestHostfilesAndStepEnv(t *testing.T) {
	t.Parallel()
	att := &raftfsm.Attempt{Hosts: []raftfsm.Host{{Node: "n01", NP: 4}, {Node: "n02", NP: 2}}}
	mpich, ompi := hostfiles(att)
	if mpich != "n01:4\nn02:2\n" || ompi != "n01 slots=4\nn02 slots=2\n" {
		t.Fatalf("hostfiles %q %q", mpich, ompi)
	}
	in := StepInput{Flavour: Copies, Wrapper: "/tmp/w/rsh", MPICHHosts: "/tmp/w/hosts.mpich", OpenMPIHosts: "/tmp/w/hosts.openmpi"}
	env := stepEnv(in)
	for _, want := range []string{"SHOAL_HOSTFILE=/tmp/w/hosts.mpich", "HYDRA_LAUNCHER=ssh", "HYDRA_LAUNCHER_EXEC=/tmp/w/rsh",
		"HYDRA_HOST_FILE=/tmp/w/hosts.mpich", "OMPI_MCA_plm_rsh_agent=/tmp/w/rsh", "OMPI_MCA_orte_default_hostfile=/tmp/w/hosts.openmpi",
		// Open MPI 5 (PRRTE): its own names for the remote shell and the hostfile.
		"PRTE_MCA_plm_ssh_agent=/tmp/w/rsh", "PRTE_MCA_plm_ssh_no_tree_spawn=1", "PRTE_MCA_prte_default_hostfile=/tmp/w/hosts.openmpi",
		"PRTE_MCA_hwloc_default_binding_policy=none"} {
		if !slices.Contains(env, want) {
			t.Errorf("step env lacks %s: %q", want, env)
		}
	}
	if slices.Contains(env, "OMPI_MCA_rmaps_base_oversubscribe=1") || slices.Contains(env, "OMPI_ALLOW_RUN_AS_ROOT=1") ||
		slices.Contains(env, "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe") || slices.Contains(env, "PRTE_ALLOW_RUN_AS_ROOT=1") {
		t.Errorf("oversubscribe or root allowed unasked: %q", env)
	}
	in.Flavour, in.Degraded, in.AllowRoot = OpenMPI, true, true
	env = stepEnv(in)
	for _, want := range []string{"SHOAL_HOSTFILE=/tmp/w/hosts.openmpi", "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe", "PRTE_ALLOW_RUN_AS_ROOT=1", "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("open mpi, degraded, root: step env lacks %s: %q", want, env)
		}
	}
}
