package jobrun

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// Flavour is how the processes of an attempt are started: an MPI launcher
// on the head that reaches the other nodes through `shoal rsh`, or plain
// copies started on each node through its agent.
type Flavour string

// The flavours a job may ask for (--mpi).
const (
	// Copies starts NP copies of the command across the allocation, each
	// told its rank, the size and the hosts (--mpi none).
	Copies Flavour = "none"
	// MPICH starts the command with MPICH's Hydra (mpiexec).
	MPICH Flavour = "mpich"
	// OpenMPI starts the command with Open MPI's mpirun (ORTE).
	OpenMPI Flavour = "openmpi"
)

// FlavourOf is the flavour a job spec asks for; "" is Copies.
func FlavourOf(spec *raftfsm.JobSpec) (Flavour, error) {
	switch f := Flavour(spec.MPI); f {
	case "", Copies:
		return Copies, nil
	case MPICH, OpenMPI:
		return f, nil
	default:
		return "", fmt.Errorf("unknown MPI flavour %q (want mpich, openmpi or none)", spec.MPI)
	}
}

// LaunchPaths are the files a launch runs, found on the node before the
// launch is built.
type LaunchPaths struct {
	// Launcher is the MPI launcher (mpiexec, mpirun) as found on PATH.
	Launcher string
	// Wrapper is the script the launcher runs as its remote shell: `shoal
	// rsh` with the attempt's capability (rshwrapper.go).
	Wrapper string
}

// LaunchInput is everything the command lines of an attempt depend on.
type LaunchInput struct {
	// Spec is the job's: the command, its environment, the flavour.
	Spec *raftfsm.JobSpec
	// Attempt is the attempt's placement: its hosts, in order, and whether
	// it is degraded (more processes than a node's slots).
	Attempt *raftfsm.Attempt
	Paths   LaunchPaths
	// JobEnv is what shoal adds to every process of the attempt (the job
	// capability, the elastic variables): see jobEnv.
	JobEnv []string
	// HeadEnv is the whole environment the launcher starts with on the head
	// (processEnv's): MPICH forwards all of it to the ranks but SHOAL_NODE
	// and the process marker.
	HeadEnv []string
	// AllowRoot is set when the launcher runs as root: Open MPI refuses to
	// unless told.
	AllowRoot bool
}

// Launch is how an attempt starts: one launcher command on the head (MPI),
// or one process per rank (copies).
type Launch struct {
	// Argv is the MPI launcher's command line; nil for copies.
	Argv []string
	// Copies are the processes of a Copies attempt, in rank order.
	Copies []Copy
}

// Copy is one rank of a Copies attempt: what its node's agent runs.
type Copy struct {
	Node string
	Argv []string
	// Env is added to the process's environment: its rank, the size, the
	// hosts, and the job's own variables of shoal (LaunchInput.JobEnv).
	Env []string
}

// BuildLaunch turns an attempt into the command lines that start it. It is
// pure: finding the launcher, writing the wrapper and starting processes
// happen around it.
//
// MPICH's Hydra gets the wrapper as an ssh launcher and the hosts with
// their process counts; it forwards every variable of the head's
// environment but perNodeVars (every rank's SHOAL_NODE must name its own
// node, which its agent sets; each rank carries its own node's process
// marker, capability file and agent address).
// Open MPI's mpirun gets the wrapper as its rsh agent, no tree spawn (every
// daemon is started by the head, whose wrapper holds the capability),
// direct routing, and forwards only what -x names: the job's variables and
// shoal's, but perNodeVars.
func BuildLaunch(in LaunchInput) (Launch, error) {
	flavour, err := FlavourOf(in.Spec)
	if err != nil {
		return Launch{}, err
	}
	att := in.Attempt
	np := strconv.Itoa(att.NP())
	switch flavour {
	case Copies:
		return Launch{Copies: copies(in)}, nil
	case MPICH:
		var names []string
		for _, kv := range in.HeadEnv {
			if name, _, _ := strings.Cut(kv, "="); !slices.Contains(perNodeVars, name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		argv := []string{in.Paths.Launcher, "-launcher", "ssh", "-launcher-exec", in.Paths.Wrapper,
			"-hosts", hostSpec(att), "-n", np, "-genvlist", strings.Join(names, ",")}
		for _, kv := range in.HeadEnv {
			if name, v, _ := strings.Cut(kv, "="); name == "SHOAL_HOSTFILE" {
				argv = append(argv, "-genv", name, v)
			}
		}
		return Launch{Argv: append(argv, in.Spec.Cmd...)}, nil
	default: // OpenMPI
		argv := []string{in.Paths.Launcher, "--mca", "plm_rsh_agent", in.Paths.Wrapper,
			"--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "routed", "direct", "--mca", "mpi_yield_when_idle", "1",
			"--host", hostSpec(att), "-np", np}
		if att.Degraded {
			argv = append(argv, "--oversubscribe")
		}
		if in.AllowRoot {
			argv = append(argv, "--allow-run-as-root")
		}
		for _, kv := range slices.Concat(in.Spec.Env, in.JobEnv) {
			// A GPU variable of the job's own (an exported shell's) is
			// replaced on the head by the head's GPUs: -x would carry
			// those to every node.
			if name, _, _ := strings.Cut(kv, "="); !slices.Contains(perNodeVars, name) {
				argv = append(argv, "-x", name)
			}
		}
		return Launch{Argv: append(argv, in.Spec.Cmd...)}, nil
	}
}

// perNodeVars are the variables of the head's environment an MPI launcher
// must not forward to the ranks: each node's agent sets its own for the
// processes it starts, the launcher's remote daemon (Hydra's proxy, Open
// MPI's orted or prted) among them, and the ranks inherit the daemon's.
// SHOAL_NODE names the rank's node and the marker finds its processes; the
// capability file and the agent's addresses lead a rank to its own node's
// agent and the capability file there (the head's file exists on the head
// only, and an agent takes a capability only from a process on its own
// node); the GPU variables name the devices the attempt holds on the
// rank's node, which differ from node to node (the head's index 1 may be
// another job's device on the next node).
var perNodeVars = slices.Concat([]string{"SHOAL_NODE", procMarker, CapFileVar, "SHOAL_AGENT_ADDR", "SHOAL_AGENT_SOCK"}, gpuVars)

// copies are the ranks of a Copies attempt: NP copies of the command, the
// hosts' counts of them in order.
func copies(in LaunchInput) []Copy {
	att := in.Attempt
	hosts := make([]string, 0, len(att.Hosts))
	for _, h := range att.Hosts {
		hosts = append(hosts, h.Node)
	}
	np := att.NP()
	out := make([]Copy, 0, np)
	for _, h := range att.Hosts {
		for range h.NP {
			out = append(out, Copy{Node: h.Node, Argv: in.Spec.Cmd, Env: slices.Concat([]string{
				"SHOAL_RANK=" + strconv.Itoa(len(out)), "SHOAL_SIZE=" + strconv.Itoa(np), "SHOAL_HOSTS=" + strings.Join(hosts, ","),
				"SLURM_PROCID=" + strconv.Itoa(len(out)), // as srun numbers its tasks
			}, in.JobEnv)})
		}
	}
	return out
}

// hostSpec is the hosts of an attempt as both launchers take them:
// node:procs,node:procs.
func hostSpec(att *raftfsm.Attempt) string {
	parts := make([]string, len(att.Hosts))
	for i, h := range att.Hosts {
		parts[i] = h.Node + ":" + strconv.Itoa(h.NP)
	}
	return strings.Join(parts, ",")
}
