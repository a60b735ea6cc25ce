package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/shoal-hpc/shoal/probe"
)

// srun inside a batch script is a shim (as mpiexec and mpirun are) that
// runs shoal step: the step is launched on the job's allocation through
// the MPI launcher of the program's flavour, which already takes the
// allocation from the script's environment (the hostfile, the remote
// shell). A program that links no MPI runs as copies through the same
// launcher, each told its SLURM_PROCID, as srun runs non-MPI tasks.

// srunValueOpts are srun's options that take a value; the others given
// are flags. Only -n changes what runs: the allocation already fixes the
// nodes and how many processes each takes.
var srunValueOpts = map[string]bool{
	"n": true, "ntasks": true, "N": true, "nodes": true, "ntasks-per-node": true, "c": true, "cpus-per-task": true,
	"mpi": true, "J": true, "job-name": true, "export": true, "t": true, "time": true, "mem": true, "mem-per-cpu": true,
	"o": true, "output": true, "e": true, "error": true, "distribution": true, "m": true, "cpu-bind": true, "D": true, "chdir": true,
}

// srunCommand splits srun's arguments into its task count (0: one per
// slot of the allocation) and the program with its arguments.
func srunCommand(args []string) (ntasks string, prog []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ntasks, args[i+1:], nil
		}
		if len(a) < 2 || a[0] != '-' {
			return ntasks, args[i:], nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "--") && len(name) > 1 && srunValueOpts[name[:1]] {
			name, val, hasVal = name[:1], name[1:], true // -n8
		}
		if srunValueOpts[name] && !hasVal {
			if i+1 >= len(args) {
				return "", nil, fmt.Errorf("srun: %s needs a value", a)
			}
			i++
			val = args[i]
		}
		if name == "n" || name == "ntasks" {
			ntasks = val
		}
	}
	return "", nil, fmt.Errorf("srun: no program to run")
}

// srunLaunch is the launcher command line of `srun ARGS`: the name of the
// MPI launcher (looked up on PATH by shoal step, past the shims) and its
// arguments.
func srunLaunch(args []string) ([]string, error) {
	n, prog, err := srunCommand(args)
	if err != nil {
		return nil, err
	}
	var size []string
	if n != "" {
		size = []string{"-n", n}
	}
	flavour := ""
	if path, err := exec.LookPath(prog[0]); err == nil {
		if info, err := probe.ScanELF(path); err == nil {
			flavour = info.MPI
		}
	}
	hydra, ompi := firstOnPath("mpiexec.mpich", "mpiexec.hydra"), firstOnPath("mpirun.openmpi", "orterun")
	switch {
	case flavour == "openmpi" && ompi != "":
		return slices.Concat([]string{ompi}, size, prog), nil
	case flavour != "" && hydra != "":
		return slices.Concat([]string{hydra}, size, prog), nil
	case flavour != "":
		return slices.Concat([]string{"mpiexec"}, size, prog), nil
	}
	// Copies: Hydra starts any program, and each learns its rank from
	// PMI_RANK (Open MPI's from OMPI_COMM_WORLD_RANK).
	launcher, rank := hydra, "PMI_RANK"
	if launcher == "" {
		launcher, rank = ompi, "OMPI_COMM_WORLD_RANK"
	}
	if launcher == "" {
		return nil, fmt.Errorf("srun: no MPI launcher (mpiexec.mpich or mpirun.openmpi) on PATH to start %s", prog[0])
	}
	wrap := []string{"sh", "-c", `SLURM_PROCID=$` + rank + ` exec "$@"`, "srun"}
	return slices.Concat([]string{launcher}, size, wrap, prog), nil
}

// firstOnPath is the first of names found on PATH, or "".
func firstOnPath(names ...string) string {
	for _, n := range names {
		if _, err := exec.LookPath(n); err == nil {
			return n
		}
	}
	return ""
}
