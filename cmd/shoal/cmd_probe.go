package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/probes/child"
)

// probeCommand is `shoal probe KIND`, the body of a probe process. The
// agent starts it; it speaks JSON lines on stdin and stdout (see
// agent/probes/child) and logs to stderr. This file imports that package
// only, never the agent.
func probeCommand() *cli.Command {
	return &cli.Command{
		Name:      "probe",
		Usage:     "run one probe process (started by the agent, not by hand)",
		ArgsUsage: "nodestate|latency|bandwidth",
		Hidden:    true,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "probe takes one kind: nodestate, latency or bandwidth")
			}
			kind := c.Args().First()
			switch kind {
			case "nodestate", "latency", "bandwidth":
			default:
				return usagef(c, "no probe kind %q; want nodestate, latency or bandwidth", kind)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelInfo}))
			if err := child.Run(ctx, kind, os.Stdin, c.App.Writer, nil, log); err != nil {
				return cli.Exit("probe "+kind+": "+err.Error(), exitFailure)
			}
			return nil
		},
	}
}
