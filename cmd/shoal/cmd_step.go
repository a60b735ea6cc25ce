package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/jobrun"
)

func stepCommand() *cli.Command {
	return &cli.Command{
		Name:      "step",
		Usage:     "run an MPI launcher as a step of the batch job it runs in",
		ArgsUsage: "[--skip DIR] -- LAUNCHER [ARGS...]",
		Description: `Inside a batch script, mpiexec and mpirun are shims that run shoal step:
it runs the real LAUNCHER (found on PATH, DIR skipped) and tells the head
node's agent when the step starts and how it ended, so that shoal job lists
the script's steps (JOBID.0, JOBID.1, ...). Outside a batch script it only
runs LAUNCHER.`,
		Hidden:          true,
		SkipFlagParsing: true,
		Action:          runStep,
	}
}

func runStep(c *cli.Context) error {
	args := c.Args().Slice()
	skip := ""
	if len(args) >= 2 && args[0] == "--skip" {
		skip, args = args[1], args[2:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return cli.Exit("step: no launcher given (usage: shoal step [--skip DIR] -- LAUNCHER [ARGS...])", exitUsage)
	}
	launch := args
	if args[0] == "srun" {
		// Never a real srun further along PATH: a step of this allocation.
		var err error
		if launch, err = srunLaunch(args[1:]); err != nil {
			return cli.Exit(err.Error(), exitUsage)
		}
	}
	path, err := lookPathSkipping(launch[0], skip)
	if err != nil {
		return cli.Exit("step: "+err.Error(), 127)
	}
	var conn net.Conn
	if sock := os.Getenv("SHOAL_STEP_SOCK"); sock != "" {
		if conn, err = net.Dial("unix", sock); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "shoal step: not recorded as a step: %v\n", err)
		}
	}
	send := func(m jobrun.StepMessage) {
		if conn == nil {
			return
		}
		b, _ := json.Marshal(m)
		if _, err := conn.Write(append(b, '\n')); err != nil {
			fmt.Fprintf(c.App.ErrWriter, "shoal step: %v\n", err)
		}
	}
	send(jobrun.StepMessage{Cmd: args})
	launchArgs := launch[1:]
	if resolved, err := filepath.EvalSymlinks(path); err == nil && jobrun.IsMPICHLauncher(launch[0], resolved) {
		launchArgs = append(jobrun.MPICHStepArgs(os.Environ(), launchArgs), launchArgs...)
	}
	cmd := exec.Command(path, launchArgs...)
	// argv[0] stays the path found: Hydra looks for hydra_pmi_proxy beside
	// the mpiexec that argv[0] names, and the name alone finds the shim.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, c.App.Writer, c.App.ErrWriter
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		code := 127
		send(jobrun.StepMessage{End: true, Exit: &code})
		return cli.Exit("step: "+err.Error(), code)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s) // the launcher ends its ranks its own way
		}
	}()
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return cli.Exit("step: "+err.Error(), 1)
		}
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	send(jobrun.StepMessage{End: true, Exit: &code})
	if conn != nil {
		conn.Close()
	}
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// lookPathSkipping finds name on PATH as the shell would, leaving out the
// shims' directory skip (or it would find the shim again).
func lookPathSkipping(name, skip string) (string, error) {
	if filepath.Base(name) != name {
		return name, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || filepath.Clean(dir) == filepath.Clean(skip) {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
	}
	return "", fmt.Errorf("%s: not found on PATH", name)
}
