package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

// Exit codes scripts can rely on.
const (
	exitOK       = 0
	exitFailure  = 1 // the operation failed (job failed, refused, ...)
	exitUsage    = 2 // bad flags or arguments: nothing was attempted
	exitNoLeader = 3 // no raft leader, or no agent reachable, right now; retry later
)

var version = "dev"

// run builds the app with injected writers (so tests capture output) and
// turns its error into an exit code and one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	args, expanded, err := slurmRewrite(args)
	if err != nil {
		fmt.Fprintln(stderr, safe(err.Error()))
		return exitUsage
	}
	if !expanded {
		if len(args) == 0 || args[len(args)-1] != "--generate-bash-completion" { // must stay last
			args = reorderArgs(app, args)
		}
		args = splitGlued(app, args)
		args, err = expandScript(app, args)
	}
	if err == nil {
		err = app.Run(args)
	}
	if err == nil {
		if cl, ok := app.Metadata[metaClient].(*api.Client); ok {
			refreshCache(context.Background(), cl, app.Metadata[metaPrimary].(string), time.Now())
		}
		return exitOK
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := strings.TrimSpace(err.Error()); msg != "" {
			fmt.Fprintln(stderr, "shoal: "+safe(msg))
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(stderr, "shoal: "+safe(err.Error()))
	return exitFailure
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "shoal",
		Usage:   "a self-healing, network- and load-aware cluster agent for MPI jobs",
		Version: version,
		Description: `Every node runs 'shoal agent'. The agents gossip their load, their processing
elements and the network between them, elect a raft leader, and place jobs on
the best nodes right now. Any other command talks to the agent on this node.

Examples:
  shoal keygen > /etc/shoal/token && chmod 600 /etc/shoal/token
  shoal agent --data-dir /var/lib/shoal --token-file /etc/shoal/token --join node1
  shoal nodes
  shoal members --json
  shoal alloc -n 8 --format openmpi`,
		Metadata:        map[string]any{},
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// shoal's completion scripts (shoal gen completion) ask the binary.
		EnableBashCompletion: true,
		OnUsageError:         usageError,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() prints and exits
		Commands: []*cli.Command{
			agentCommand(),
			nodesCommand(),
			nodeCommand(),
			operatorCommand(),
			historyCommand(),
			eventsCommand(),
			membersCommand(),
			leaderCommand(),
			keygenCommand(),
			tlsCommand(),
			genCommand(),
			exportCommand(),
			slurmCommand(),
			partitionCommand(),
			partitionsCommand(),
		},
	}
	app.Commands = append(app.Commands, probeCommands()...)
	app.Commands = append(app.Commands, jobCommands()...)
	for _, c := range app.Commands {
		c.OnUsageError = usageError
	}
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return cli.Exit(fmt.Sprintf("no command %q; see 'shoal --help'", c.Args().First()), exitUsage)
		}
		return cli.ShowAppHelp(c)
	}
	return app
}

func usageError(c *cli.Context, err error, _ bool) error {
	name := "shoal"
	if c.Command != nil && c.Command.Name != "" {
		name += " " + c.Command.Name
	}
	msg := err.Error()
	if flag, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok && c.Command != nil {
		// Slurm users' and typists' near misses: --ntask-per-node.
		var names []string
		for _, f := range c.Command.Flags {
			for _, n := range f.Names() {
				names = append(names, dashed(n))
			}
		}
		if s := nearest(dashed(strings.TrimLeft(flag, "-")), names); s != "" {
			msg += "; did you mean " + s + "?"
		}
	}
	return cli.Exit(fmt.Sprintf("%s (see '%s --help')", msg, name), exitUsage)
}

// usagef reports a bad argument that flag parsing could not catch.
func usagef(c *cli.Context, format string, a ...any) error {
	return usageError(c, fmt.Errorf(format, a...), false)
}
