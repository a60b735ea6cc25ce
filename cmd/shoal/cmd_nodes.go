package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

func nodesCommand() *cli.Command {
	return &cli.Command{
		Name:  "nodes",
		Usage: "list every node with its inventory and load, like sinfo",
		Description: `Load, CPU, free memory and network flow are shown now / 5-minute mean.

SWITCH is the node's --switch, or the switch the leader inferred from the
bandwidth tests followed by "?" ("~n3?": a switch no node declares, named
after its first node); "-" while unknown.

DRAIN is "draining" while a drained node still runs jobs, "drained" once it
runs none (shoal node drain). ROLE is server-voter or server-nonvoter for the
raft servers, client for the agents that follow the state from a server, "-"
while a node has not settled.

STATUS is "unhealthy" for a live server whose raft log cannot be written (a
full or read-only disk), with the reason under the table: its copy of the
cluster state may be stale, it refuses reads of it, and the leader demotes it
from voter until it can write again (--json: "health" and "unhealthy").

Examples:
  shoal nodes
  shoal nodes --json | jq '.[] | select(.status == "alive") | .name'`,
		Flags: append(clientFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "nodes takes no arguments")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			ns, err := cl.Nodes(c.Context)
			if err != nil {
				return apiError(err)
			}
			ns = byNodeName(ns)
			if c.Bool("json") {
				return printJSON(c, ns)
			}
			writeNodesTable(c.App.Writer, ns)
			return nil
		},
	}
}

func writeNodesTable(w interface{ Write([]byte) (int, error) }, ns []api.Node) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDR\tSTATUS\tCORES\tLOAD 1/5/15\tCPU%\tMEM FREE\tNET FLOW\tUSERS\tPES\tCONFINED\tSWITCH\tDRAIN\tROLE")
	var unconfined, unhealthy []string
	for _, n := range byNodeName(ns) {
		role := n.Role
		if role == "" {
			role = "-"
		}
		status := n.Status
		if n.Health == "unhealthy" && status == "alive" {
			status = "unhealthy"
		}
		if n.Unhealthy != "" {
			unhealthy = append(unhealthy, fmt.Sprintf("%s: unhealthy: %s", safe(n.Name), safe(n.Unhealthy)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%.2f/%.2f/%.2f\t%.0f\t%s/%s\t%s/s\t%d\t%s\t%s\t%s\t%s\t%s\n",
			safe(n.Name), safe(n.Addr), safe(status), n.Cores, n.Threads, n.Load.M1, n.Load.M5, n.Load.M15,
			n.CPUUtil.M1, bytesIEC(n.MemAvail.Now), bytesIEC(float64(n.MemTotal)), bytesIEC(n.NetFlow.M1), n.Users, safe(pesString(n.PEs)), yesNo(n.Confined), safe(switchCell(n)), safe(drainCell(n)), safe(role))
		if !n.Confined && n.Unconfined != "" {
			unconfined = append(unconfined, fmt.Sprintf("%s: confined: no (%s)", safe(n.Name), safe(n.Unconfined)))
		}
	}
	tw.Flush()
	// Why a node is unhealthy or runs its jobs unconfined, one line each,
	// under the table.
	for _, l := range append(unhealthy, unconfined...) {
		fmt.Fprintln(w, l)
	}
}

// switchCell is the SWITCH column: the declared switch, the inferred one
// with a "?" (the leader clustered the bandwidth measurements; its name
// starts with "~" when no node of it declares one), "-" when unknown.
func switchCell(n api.Node) string {
	switch {
	case n.Switch == "":
		return "-"
	case n.SwitchInferred:
		return n.Switch + "?"
	}
	return n.Switch
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// drainCell is the DRAIN column, the last so that the columns before it
// stay where scripts read them: "-" in service, else the drain and its
// deadline.
func drainCell(n api.Node) string {
	if n.Drain == "" {
		return "-"
	}
	if n.DrainDeadline != nil && n.Drain == "draining" {
		return n.Drain + " (requeue at " + n.DrainDeadline.Local().Format("15:04:05") + ")"
	}
	return n.Drain
}

func pesString(pes []api.PE) string {
	var parts []string
	for _, p := range pes {
		s := fmt.Sprintf("%s:%d", p.Kind, p.Count)
		if p.Model != "" && p.Kind != "cpu" {
			s += "(" + p.Model + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

func bytesIEC(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f%s", b, units[i])
	}
	return fmt.Sprintf("%.1f%s", b, units[i])
}
