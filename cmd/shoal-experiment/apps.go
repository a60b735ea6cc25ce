package main

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
)

// app is one MPI program the experiment runs on every chosen group.
type app struct {
	name string
	// argv is the program and its arguments (after mpirun's own).
	argv []string
	// parse reads the program's time and communication time (seconds)
	// from its output.
	parse func(out string) (timeS, commS float64, err error)
}

// meltInput is LAMMPS's LJ melt example (in.melt, from LAMMPS's examples).
//
//go:embed in.melt
var meltInput []byte

var (
	haloLine   = regexp.MustCompile(`time_s=([0-9.]+) comm_s=([0-9.]+)`)
	lammpsLoop = regexp.MustCompile(`Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps`)
	lammpsComm = regexp.MustCompile(`(?m)^Comm\s*\|\s*[0-9.eE+-]+\s*\|\s*([0-9.eE+-]+)`)
)

// buildApps prepares the programs named in c.apps in dir: halo built
// from its source, LAMMPS (Debian's lmp, linked to Open MPI) with the
// melt input written next to it.
func buildApps(c config, dir string) ([]app, error) {
	var out []app
	for _, name := range c.apps {
		switch name {
		case "halo":
			prog, err := buildProgram(c.halo, dir, c.mpi)
			if err != nil {
				return nil, err
			}
			out = append(out, app{name: "halo",
				argv:  []string{prog, strconv.Itoa(c.iters), strconv.Itoa(c.haloKiB), strconv.Itoa(c.sweeps)},
				parse: parseHalo})
		case "lammps":
			if c.mpi != "openmpi" {
				return nil, fmt.Errorf("-apps lammps: Debian's lmp is built against Open MPI; use -mpi openmpi")
			}
			lmp, err := exec.LookPath(c.lmp)
			if err != nil {
				return nil, fmt.Errorf("-apps lammps: %w (install Debian's lammps package: make deps)", err)
			}
			in := filepath.Join(dir, "in.melt")
			if err := os.WriteFile(in, meltInput, 0o644); err != nil {
				return nil, fmt.Errorf("write LAMMPS input: %w", err)
			}
			out = append(out, app{name: "lammps",
				argv:  []string{lmp, "-in", in, "-var", "steps", strconv.Itoa(c.lammpsSteps), "-log", "none", "-nocite"},
				parse: parseLammps})
		default:
			return nil, fmt.Errorf("-apps: unknown program %q (halo, lammps)", name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("-apps: no program to run")
	}
	for i := range out {
		out[i].argv = inSession(out[i].argv, c.rankSessions)
	}
	return out, nil
}

// defaultRankSessions is -rank-sessions' default: on.
//
// Why: the host's kernel groups
// the tasks of a session into one autogroup and shares the CPUs between
// autogroups first. The orted that starts ranks 1-3 on the other nodes
// calls setsid, so each of them is an autogroup of its own; rank 0, which
// mpirun starts on the head node, stayed in the experiment's session with
// the 10-12 agents, iperf3 and mpirun. With the ranks weighed so
// unevenly, one rank kept a core nearly to itself in 73 of 74 runs while
// the other three shared the other core with everything else, and the
// run's time followed how that went. In a session of its own every rank,
// on every group, is one autogroup like the others.
const defaultRankSessions = true

// inSession runs argv in a new session (setsid(1); --wait keeps the
// rank's exit status for mpirun when setsid has to fork) when on is set.
func inSession(argv []string, on bool) []string {
	if !on {
		return argv
	}
	return append([]string{"setsid", "--wait"}, argv...)
}

func parseHalo(out string) (float64, float64, error) {
	mm := haloLine.FindStringSubmatch(out)
	if mm == nil {
		return 0, 0, fmt.Errorf("no timing line in output: %s", truncate(out, 200))
	}
	t, err1 := strconv.ParseFloat(mm[1], 64)
	c, err2 := strconv.ParseFloat(mm[2], 64)
	return t, c, errors.Join(err1, err2)
}

// parseLammps reads LAMMPS's "Loop time of T on P procs for S steps" and
// the average of its Comm row (the timing breakdown).
func parseLammps(out string) (float64, float64, error) {
	mm := lammpsLoop.FindStringSubmatch(out)
	if mm == nil {
		return 0, 0, fmt.Errorf("no 'Loop time' line in LAMMPS output: %s", truncate(out, 200))
	}
	t, err := strconv.ParseFloat(mm[1], 64)
	if err != nil {
		return 0, 0, fmt.Errorf("LAMMPS loop time %q: %w", mm[1], err)
	}
	var comm float64
	if cm := lammpsComm.FindStringSubmatch(out); cm != nil {
		comm, _ = strconv.ParseFloat(cm[1], 64)
	}
	return t, comm, nil
}

// buildProgram compiles a .c file with the flavour's mpicc, or returns
// the executable it is given.
func buildProgram(src, dir, flavour string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	if filepath.Ext(src) != ".c" {
		return abs, nil
	}
	exe := filepath.Join(dir, filepath.Base(src[:len(src)-2]))
	cc := "mpicc." + flavour
	if b, err := exec.Command(cc, "-O2", "-o", exe, abs, "-lm").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", cc, src, err, b)
	}
	return exe, nil
}
