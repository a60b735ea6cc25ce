package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

// probeCommands are `shoal net`, `shoal rtt`, `shoal probes` and `shoal
// probe KIND`: what the network probes measured, and the probes themselves.
func probeCommands() []*cli.Command {
	return []*cli.Command{netCommand(), rttCommand(), probesCommand(), probeCommand()}
}

func probesCommand() *cli.Command {
	return &cli.Command{
		Name:  "probes",
		Usage: "list the probe processes of every node with their heartbeat and restarts",
		Description: `Each node runs three probes as their own processes: nodestate (load and
memory), latency (pings to every peer) and bandwidth (the tests of the
leader's schedule). The raft leader relaunches a probe that exits or stops
beating; RESTARTS counts those relaunches.

Examples:
  shoal probes
  shoal probes --json | jq '.[] | select(.state != "running")'`,
		Flags: append(clientFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "probes takes no arguments")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			ps, err := cl.Probes(c.Context)
			if err != nil {
				return apiError(err)
			}
			ps = byProbeNode(ps)
			if c.Bool("json") {
				return printJSON(c, ps)
			}
			writeProbesTable(c.App.Writer, ps, time.Now())
			return nil
		},
	}
}

func writeProbesTable(w interface{ Write([]byte) (int, error) }, ps []api.ProbeInfo, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tSTATE\tPID\tRESTARTS\tLAST BEAT\tLAST RELAUNCH REASON")
	for _, p := range byProbeNode(ps) {
		beat := "never"
		if !p.LastBeat.IsZero() {
			beat = now.Sub(p.LastBeat).Round(100*time.Millisecond).String() + " ago"
		}
		pid := "in-process"
		if p.PID > 0 {
			pid = fmt.Sprint(p.PID)
		}
		reason := p.LastReason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", safe(p.Node), safe(p.Kind), safe(p.State), pid, p.Restarts, beat, safe(reason))
	}
	tw.Flush()
}
