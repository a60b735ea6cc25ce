package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// nodeCommand is `shoal node drain|undrain NODE`: maintenance of one node.
func nodeCommand() *cli.Command {
	return &cli.Command{
		Name:  "node",
		Usage: "take a node out of service and back (drain, undrain)",
		Description: `Examples:
  shoal node drain node3 --deadline 30m   # no new jobs; requeue what still runs in 30 min
  shoal node undrain node3`,
		Subcommands: []*cli.Command{
			{
				Name:      "drain",
				Usage:     "place no new job on NODE; its running jobs finish (or are requeued after --deadline)",
				ArgsUsage: "NODE",
				Description: `Like Slurm's 'scontrol update state=drain' and Nomad's 'node drain': the
node takes no new job, and the jobs running there go on. With --deadline, the
jobs still running when it passes are requeued elsewhere, as if the node had
died. 'shoal nodes' shows the node "draining" until no job runs there, then
"drained". The drain is in raft: it survives agent restarts and a new leader.
Draining a drained node again replaces its deadline. Root or the cluster token only.

Examples:
  shoal node drain node3
  shoal node drain node3 --deadline 30m`,
				Flags: append(clientFlags(), jsonFlag(),
					&cli.StringFlag{Name: "deadline", Usage: "requeue the jobs still running after `D` (e.g. 30m, 2h); default: wait for them"}),
				Action: func(c *cli.Context) error {
					node, err := oneNodeArg(c, "drain")
					if err != nil {
						return err
					}
					if d := c.String("deadline"); d != "" {
						v, err := time.ParseDuration(d)
						if err != nil || v <= 0 || v > raftfsm.MaxDrainDeadline {
							return usagef(c, "--deadline %q: want a duration such as 30m or 2h, above 0 and at most %v", d, raftfsm.MaxDrainDeadline)
						}
					}
					cl, err := newClient(c)
					if err != nil {
						return err
					}
					st, err := cl.Drain(c.Context, node, c.String("deadline"))
					if err != nil {
						return apiError(err)
					}
					return printDrain(c, st)
				},
			},
			{
				Name:      "undrain",
				Usage:     "return a drained NODE to service",
				ArgsUsage: "NODE",
				Description: `Undoes 'shoal node drain': the node takes new jobs again (Slurm's
state=resume). Undraining a node in service does nothing. Root or the cluster token only.

Example:
  shoal node undrain node3`,
				Flags: append(clientFlags(), jsonFlag()),
				Action: func(c *cli.Context) error {
					node, err := oneNodeArg(c, "undrain")
					if err != nil {
						return err
					}
					cl, err := newClient(c)
					if err != nil {
						return err
					}
					st, err := cl.Undrain(c.Context, node)
					if err != nil {
						return apiError(err)
					}
					return printDrain(c, st)
				},
			},
		},
	}
}

func oneNodeArg(c *cli.Context, verb string) (string, error) {
	if c.NArg() != 1 || c.Args().First() == "" {
		return "", usagef(c, "%s takes one node name, e.g. 'shoal node %s node3'", verb, verb)
	}
	return c.Args().First(), nil
}

func printDrain(c *cli.Context, st api.DrainStatus) error {
	if c.Bool("json") {
		return printJSON(c, st)
	}
	switch {
	case st.Drain == "":
		fmt.Fprintf(c.App.Writer, "%s: in service\n", safe(st.Node))
	case st.Deadline != nil:
		fmt.Fprintf(c.App.Writer, "%s: %s; jobs still running at %s are requeued\n", safe(st.Node), st.Drain, st.Deadline.Local().Format(time.RFC3339))
	default:
		fmt.Fprintf(c.App.Writer, "%s: %s\n", safe(st.Node), st.Drain)
	}
	return nil
}
