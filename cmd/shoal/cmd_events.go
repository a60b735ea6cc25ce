package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:  "events",
		Usage: "print the cluster's events as they happen: jobs, attempts, nodes, probes",
		Description: `Follows the agent's event stream (GET /v1/events) until interrupted, one
line per event: its index, topic, type and key, and a short summary. With
--json each event is one JSON object per line, payload included: the job,
attempt, node or probe as 'shoal job', 'shoal nodes' and 'shoal probes
--json' show it. A "reset" event means events were lost (the stream fell
behind, or --index is older than the agent keeps): read the state again.
When the stream breaks, the command reconnects and goes on after the last
event it printed.

Examples:
  shoal events
  shoal events --topic job,attempt
  shoal events --json --index 1200 | jq 'select(.type == "ended")'`,
		Flags: append(clientFlags(), jsonFlag(),
			&cli.StringSliceFlag{Name: "topic", Usage: "only events of `TOPIC` (job, attempt, node, probe); repeat or separate by commas"},
			&cli.Uint64Flag{Name: "index", Usage: "start after event index `N` (an X-Shoal-Index, or the index of an event printed before) instead of now"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(c, "events takes no arguments")
			}
			var topics []string
			for _, t := range c.StringSlice("topic") {
				for _, s := range strings.Split(t, ",") {
					if s = strings.TrimSpace(s); s != "job" && s != "attempt" && s != "node" && s != "probe" {
						return usagef(c, "--topic %q: want job, attempt, node or probe", s)
					}
					topics = append(topics, strings.TrimSpace(s))
				}
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			q := api.EventsQuery{Topics: topics, After: c.Uint64("index"), Resume: c.IsSet("index")}
			print := func(e api.Event) error {
				q.After, q.Resume = e.Index, true
				if c.Bool("json") {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(c.App.Writer, "%s\n", b)
					return err
				}
				_, err := fmt.Fprintln(c.App.Writer, eventLine(e))
				return err
			}
			var lost time.Time
			for {
				err := cl.Events(c.Context, q, print)
				if c.Context.Err() != nil {
					return nil
				}
				var se *api.StatusError
				if errors.As(err, &se) && se.Code/100 == 4 || errors.Is(err, api.ErrUnauthorized) {
					return apiError(err)
				}
				// The agent went away or ended the stream: reconnect after
				// the last event printed, for as long as shoal run would.
				if lost.IsZero() {
					lost = time.Now()
				} else if time.Since(lost) > agentGone {
					return cli.Exit(fmt.Sprintf("lost the agent's event stream for %v: %v", agentGone, err), exitFailure)
				}
				fmt.Fprintf(c.App.ErrWriter, "shoal: event stream broke (%v); reconnecting after index %d\n", err, q.After)
				pause(c.Context, time.Second)
			}
		},
	}
}

// eventLine is the one-line form of an event.
func eventLine(e api.Event) string {
	return fmt.Sprintf("%-8d %-8s %-10s %-16s %s", e.Index, e.Topic, e.Type, safe(or(e.Key, "-")), safe(eventSummary(e)))
}

// eventSummary picks from the payload what a reader wants on the line.
func eventSummary(e api.Event) string {
	switch e.Topic {
	case "job":
		var j api.Job
		if json.Unmarshal(e.Payload, &j) != nil || j.ID == 0 {
			return ""
		}
		s := fmt.Sprintf("%s %s", j.State, j.Owner)
		if len(j.Hosts) > 0 {
			s += " on " + hostsString(j.Hosts)
		}
		if j.WaitReason != "" {
			s += " (" + j.WaitReason + ")"
		}
		return s + ": " + strings.Join(j.Spec.Cmd, " ")
	case "attempt":
		var a api.Attempt
		if json.Unmarshal(e.Payload, &a) != nil || a.N == 0 {
			return ""
		}
		s := fmt.Sprintf("%s on %s", a.State, hostsString(a.Hosts))
		if a.Reason != "" {
			s += ": " + a.Reason
		}
		return s
	case "node":
		var n api.Node
		if json.Unmarshal(e.Payload, &n) != nil || n.Name == "" {
			return ""
		}
		return fmt.Sprintf("%s load %.2f %.2f %.2f", n.Status, n.Load.M1, n.Load.M5, n.Load.M15)
	case "probe":
		var p api.ProbeInfo
		if json.Unmarshal(e.Payload, &p) != nil || p.Node == "" {
			return ""
		}
		return fmt.Sprintf("%s, %d restarts", p.State, p.Restarts)
	}
	return ""
}
