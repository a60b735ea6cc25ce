package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
)

// historyCommand is `shoal history`: finished jobs, the purged ones too,
// like Slurm's sacct.
func historyCommand() *cli.Command {
	return &cli.Command{
		Name:  "history",
		Usage: "list finished jobs, including those job GC purged, like sacct",
		Description: `Every finished job, by ID: those the cluster still holds (see 'shoal job') and
the records of those purged after --job-retention, kept for the agents'
--history-retention (default 30 days, the newest 10000 at most). Any agent
answers: the records are in raft. PURGED jobs have no logs left.

Examples:
  shoal history
  shoal history --user alice
  shoal history --json | jq '.[] | select(.state == "failed") | .id'`,
		Flags: append(clientFlags(), jsonFlag(),
			&cli.StringFlag{Name: "user", Usage: "only the jobs of user `NAME`"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "history takes no arguments")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			hs, err := cl.History(c.Context, c.String("user"))
			if err != nil {
				return apiError(err)
			}
			if c.Bool("json") {
				return printJSON(c, hs)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tOWNER\tSTATE\tEXIT\tNP\tNODES\tSUBMITTED\tELAPSED\tPURGED\tCOMMAND")
			for _, h := range hs {
				exit, elapsed := "-", "-"
				if h.ExitCode != nil {
					exit = fmt.Sprint(*h.ExitCode)
				}
				if h.StartedAt != nil {
					elapsed = h.EndedAt.Sub(*h.StartedAt).Round(time.Second).String()
				}
				nodes := strings.Join(h.Nodes, ",")
				if nodes == "" {
					nodes = "-"
				}
				purged := "no"
				if h.Purged {
					purged = "yes"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", h.ID, cell(h.Owner, 16), cell(h.State, 8), exit, h.NP,
					cell(nodes, 40), h.SubmittedAt.Local().Format("2006-01-02T15:04:05"), elapsed, purged, cell(strings.Join(h.Cmd, " "), 40))
			}
			return tw.Flush()
		},
	}
}
