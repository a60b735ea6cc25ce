package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
)

func rttCommand() *cli.Command {
	return &cli.Command{
		Name:      "rtt",
		Usage:     "estimate the round trip between two nodes from their network coordinates",
		ArgsUsage: "NODE [NODE]",
		Description: `Like 'consul rtt': the round-trip time between two nodes that their Vivaldi
network coordinates predict (hashicorp/serf/coordinate, fed by the gossip
layer's pings), and the measured 1-minute mean of direct pings when the
latency probe has one. With one NODE the other is the node of the agent
asked.

Examples:
  shoal rtt n02
  shoal rtt n02 n07`,
		Flags: clientFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usagef(c, "rtt takes one or two node names")
			}
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			a, b := c.Args().Get(0), c.Args().Get(1)
			if b == "" {
				self, err := cl.Self(c.Context)
				if err != nil {
					return apiError(err)
				}
				b = self.Name
			}
			if a == b {
				return usagef(c, "%q twice: give two different nodes", a)
			}
			pairs, err := cl.Net(c.Context)
			if err != nil {
				return apiError(err)
			}
			out, err := rttReport(pairs, a, b)
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			fmt.Fprint(c.App.Writer, out)
			return nil
		},
	}
}

// rttReport finds the pair a-b in GET /v1/net's answer and says what the
// coordinates estimate and, if any, what direct pings measured (either
// direction; a's row first).
func rttReport(pairs []api.NetPair, a, b string) (string, error) {
	var est, measured *float64
	for _, p := range pairs {
		fwd := p.From == a && p.To == b
		if !fwd && (p.From != b || p.To != a) {
			continue
		}
		if p.RTTEstms != nil && (est == nil || fwd) {
			est = p.RTTEstms
		}
		if p.RTTms != nil && (measured == nil || fwd) {
			measured = p.RTTms
		}
	}
	if est == nil {
		return "", fmt.Errorf("no coordinate estimate for %s <-> %s: a node is unknown or dead, runs with coordinates off, or has not completed a ping yet (see 'shoal nodes')", a, b)
	}
	out := fmt.Sprintf("Estimated %s <-> %s rtt: %.3f ms (using network coordinates)\n", a, b, *est)
	if measured != nil {
		out += fmt.Sprintf("Measured  %s <-> %s rtt: %.3f ms (1-minute mean of direct pings)\n", a, b, *measured)
	}
	return out, nil
}
