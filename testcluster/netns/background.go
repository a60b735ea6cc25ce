package netns

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// FlowPortBase is the TCP port of the iperf3 server of Topology.Flows[0];
// flow i listens on FlowPortBase+i.
const FlowPortBase = 5301

// backgroundTimeout bounds the wait for a flow's server and connection.
const backgroundTimeout = 15 * time.Second

// startBackground starts the topology's CPU hogs and background flows.
func (tb *Testbed) startBackground(ctx context.Context) error {
	for _, h := range tb.topo.Hogs {
		for w := 0; w < h.Workers; w++ {
			argv := []string{"nice", "-n", strconv.Itoa(h.Nice), "sh", "-c", "while :; do :; done"}
			if _, err := tb.Start(context.WithoutCancel(ctx), h.Node, argv, nil); err != nil {
				return fmt.Errorf("cpu hog on %s: %w", h.Node, err)
			}
		}
		tb.log.Info("cpu hog started", "node", h.Node, "workers", h.Workers, "nice", h.Nice)
	}
	for i, f := range tb.topo.Flows {
		if err := tb.startFlow(ctx, FlowPortBase+i, f); err != nil {
			return fmt.Errorf("flow %s->%s: %w", f.From, f.To, err)
		}
	}
	return nil
}

// startFlow runs an iperf3 server on f.To and a client on f.From that
// sends for a day (Close stops it), and waits until they are connected.
func (tb *Testbed) startFlow(ctx context.Context, port int, f Flow) error {
	p := strconv.Itoa(port)
	bg := context.WithoutCancel(ctx) // the flow outlives Up's ctx; Close stops it
	if _, err := tb.Start(bg, f.To, []string{"iperf3", "-s", "-p", p}, nil); err != nil {
		return err
	}
	if err := tb.WaitListening(ctx, f.To, port, backgroundTimeout); err != nil {
		return err
	}
	to, _ := tb.Node(f.To)
	argv := []string{"iperf3", "-c", to.String(), "-p", p, "-t", "86400", "-i", "10"}
	if f.Mbit > 0 {
		argv = append(argv, "-b", strconv.Itoa(f.Mbit)+"M")
	}
	if f.UDP {
		argv = append(argv, "-u")
	}
	if _, err := tb.Start(bg, f.From, argv, nil); err != nil {
		return err
	}
	if err := tb.waitEstablished(ctx, f.From, port, backgroundTimeout); err != nil {
		return err
	}
	tb.log.Info("background flow started", "from", f.From, "to", f.To, "mbit", f.Mbit, "port", port)
	return nil
}
