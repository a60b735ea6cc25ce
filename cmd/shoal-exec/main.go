// Command shoal-exec is the small binary a shoal agent starts a job with:
// the job helper (agent/jobexec, which takes over a process started under
// its name before main runs) and `shoal-exec rsh`, the remote shell MPI
// launchers run once per remote host (the same as `shoal rsh`).
//
// Both are on the path from a submit to a job's ranks, once per process
// started. shoal itself links the agent, the CLI and their libraries, and
// the runtime and package initialisation of that binary cost several
// times what this one's do; this one links the helper and the job's
// client of its agent only. An agent uses the shoal-exec beside its own
// binary (jobrun.ExecBin), and starts jobs as before without one.
//
// Usage (inside a job):
//
//	shoal-exec rsh [-x] HOST CMD...
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	// Its init is the job helper when the agent started this process as one.
	_ "github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/internal/injob"
	"github.com/shoal-hpc/shoal/internal/termsafe"
)

const usage = `usage: shoal-exec rsh [-x] [ssh options] HOST CMD...

shoal-exec is started by the shoal agent: as the job helper, and as the
remote shell of a job's MPI launcher, which runs CMD on HOST within the
current job (see 'shoal rsh --help').

Example (inside a job):
  shoal-exec rsh n2 hostname`

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[1] != "rsh" {
		if len(args) == 2 && (args[1] == "-h" || args[1] == "--help" || args[1] == "help") {
			fmt.Fprintln(stdout, usage)
			return 0
		}
		fmt.Fprintln(stderr, usage)
		return injob.ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	code, msg := injob.Rsh(ctx, args[2:], stdout, stderr)
	if msg != "" {
		fmt.Fprintln(stderr, "shoal: "+termsafe.Safe(msg))
	}
	return code
}
