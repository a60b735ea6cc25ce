package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

func membersCommand() *cli.Command {
	return &cli.Command{
		Name:  "members",
		Usage: "list members with their status and raft role",
		Description: `Roles: leader, voter, nonvoter (raft servers), client (not in raft: follows the
state from a server), or none while a node has not settled yet. 'shoal nodes' shows the
same as server-voter, server-nonvoter or client.

Examples:
  shoal members
  shoal members --json`,
		Flags: append(clientFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "members takes no arguments")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			ms, err := cl.Members(c.Context)
			if err != nil {
				return apiError(err)
			}
			ms = byMemberName(ms)
			if c.Bool("json") {
				return printJSON(c, ms)
			}
			return writeMembersTable(c.App.Writer, ms)
		},
	}
}

func writeMembersTable(w io.Writer, ms []api.Member) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDR\tSTATUS\tROLE")
	for _, m := range byMemberName(ms) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", safe(m.Name), safe(m.Addr), safe(m.Status), safe(m.Role))
	}
	return tw.Flush()
}

func leaderCommand() *cli.Command {
	return &cli.Command{
		Name:  "leader",
		Usage: "print the raft leader's name and address",
		Description: `Exits 3 when the cluster has no leader right now.

Examples:
  shoal leader
  shoal leader --json`,
		Flags: append(clientFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "leader takes no arguments")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			l, err := cl.Leader(c.Context)
			if err != nil {
				return apiError(err)
			}
			if c.Bool("json") {
				return printJSON(c, l)
			}
			fmt.Fprintf(c.App.Writer, "%s %s\n", safe(l.Name), safe(l.Addr))
			return nil
		},
	}
}
