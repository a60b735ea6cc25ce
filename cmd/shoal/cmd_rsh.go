package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/internal/injob"
)

func rshCommand() *cli.Command {
	return &cli.Command{
		Name:      "rsh",
		Usage:     "remote launcher for MPI: run CMD on HOST within the current job",
		ArgsUsage: "[-x] [ssh options] HOST CMD...",
		Description: `shoal rsh is what MPI launchers call instead of ssh, so no ssh daemon is
needed. It runs only inside a shoal job (the agent names the attempt's
capability file in SHOAL_JOB_CAP_FILE)
and only on nodes the job holds. It streams CMD's output and exits with its
status; when rsh goes away, CMD's whole process tree is killed.

  MPICH:    mpiexec -launcher ssh -launcher-exec "shoal rsh" -hosts n1:4,n2:4 -n 8 ./app
  Open MPI: mpirun --mca plm_rsh_agent "shoal rsh" --host n1:4,n2:4 -np 8 ./app

shoal run does this for you.

Examples (inside a job):
  shoal rsh n2 hostname
  shoal rsh -x n2 env`,
		SkipFlagParsing: true,
		Action:          runRsh,
	}
}

func runRsh(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	code, msg := injob.Rsh(ctx, c.Args().Slice(), c.App.Writer, c.App.ErrWriter)
	if code != 0 || msg != "" {
		return cli.Exit(msg, code)
	}
	return nil
}
