package main

import "github.com/urfave/cli/v2"

// jobCommands are run, submit, jobs, job, logs, kill, hold, release, rsh, alloc and progress.
func jobCommands() []*cli.Command {
	return []*cli.Command{runCommand(), submitCommand(), jobsCommand(), jobCommand(), logsCommand(), killCommand(), holdCommand(true), holdCommand(false), rshCommand(), stepCommand(), allocCommand(), progressCommand()}
}
