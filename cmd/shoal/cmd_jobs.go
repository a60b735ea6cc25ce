package main

import "github.com/urfave/cli/v2"

// jobCommands are run, submit, jobs, job, logs, kill, rsh, alloc (issues 4, 6).
func jobCommands() []*cli.Command { return nil }
