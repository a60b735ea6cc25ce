package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/topoexport"
	"github.com/shoal-hpc/shoal/netmodel"
)

// exportCommand is `shoal export slurm-topology|k8s-labels`: the switches
// shoal knows and the links it measured, written for another scheduler.
func exportCommand() *cli.Command {
	slowRatio := &cli.Float64Flag{Name: "slow-ratio", Value: topoexport.DefaultSlowRatio,
		Usage: "a node whose link measures below `R` times its switch's median link is on a slow link (0 < R < 1)"}
	return &cli.Command{
		Name:  "export",
		Usage: "write the measured topology for another scheduler (Slurm's topology.conf, Kubernetes labels)",
		Description: `Examples:
  shoal export slurm-topology > /etc/slurm/topology.conf
  shoal export k8s-labels | sh`,
		Subcommands: []*cli.Command{
			{
				Name:  "slurm-topology",
				Usage: "print a Slurm topology.conf from the switches shoal configured or inferred",
				Description: `The switches are the nodes' --switch, or for nodes that declare none the
switches the leader inferred from the bandwidth tests (named shoal-NODE after
their smallest member). A node whose switch is unknown gets a leaf of its own.

--plugin tree (default) writes SwitchName=SW Nodes=... per leaf switch and a
root SwitchName=root Switches=... joining them, for TopologyPlugin=topology/tree;
--plugin block writes BlockName=SW Nodes=... (Slurm 23.11 and later,
TopologyPlugin=topology/block), with BlockSizes= the smallest block when they
differ.

A node whose link (its best latest bandwidth test against a peer on its own
switch) measures below --slow-ratio times its switch's median is named in a
comment line. Slurm's topology files cannot say a link is slow; node weights
can: --weights prints, instead of topology.conf, NodeName=N Weight=W for each
such node, W = 100 x the switch's median / the node's link, to put on the
node's NodeName line in slurm.conf. Slurm allocates the lowest weight first
and the other nodes keep the default weight 1, so a slow node is taken last.
The node names are shoal's, by default each node's host name: Slurm's
NodeName must match. Run it again after the links change (e.g. from cron) and
'scontrol reconfigure' or restart slurmctld.

Examples:
  shoal export slurm-topology > /etc/slurm/topology.conf
  shoal export slurm-topology --plugin block
  shoal export slurm-topology --weights
  shoal export slurm-topology --json | jq '.slow'`,
				Flags: append(clientFlags(), jsonFlag(), slowRatio,
					&cli.StringFlag{Name: "plugin", Value: "tree", Usage: "Slurm topology `PLUGIN` to write for: tree or block"},
					&cli.BoolFlag{Name: "weights", Usage: "print slurm.conf node weights for the nodes on slow links instead of topology.conf"}),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef(c, "export slurm-topology takes no arguments")
					}
					plugin := c.String("plugin")
					if plugin != "tree" && plugin != "block" {
						return usagef(c, "--plugin %q: use tree or block", plugin)
					}
					t, err := exportTopology(c)
					if err != nil {
						return err
					}
					switch {
					case c.Bool("json"):
						return printJSON(c, t)
					case c.Bool("weights"):
						return t.SlurmWeights(c.App.Writer)
					case plugin == "block":
						return t.SlurmBlock(c.App.Writer)
					}
					return t.SlurmTree(c.App.Writer)
				},
			},
			{
				Name:  "k8s-labels",
				Usage: "print kubectl commands that label nodes with their switch, for Kubernetes topology-aware scheduling",
				Description: `One 'kubectl label node' line per node, with the labels
  topology.shoal.io/block      the fabric: every node of this shoal cluster (--block)
  topology.shoal.io/switch     the node's leaf switch, as slurm-topology names it
  topology.shoal.io/slow-link  "true" on a node whose link measures below
                               --slow-ratio times its switch's median; removed
                               from every other node
For Kueue's Topology Aware Scheduling, a Topology with the levels
topology.shoal.io/block, topology.shoal.io/switch and kubernetes.io/hostname
keeps a workload's pods under one switch when they fit. The node names are
shoal's, by default each node's host name: they must match the Kubernetes
node names. --json prints each node's labels instead.

Examples:
  shoal export k8s-labels | sh
  shoal export k8s-labels --block lab2
  shoal export k8s-labels --json`,
				Flags: append(clientFlags(), jsonFlag(), slowRatio,
					&cli.StringFlag{Name: "block", Value: "shoal", Usage: "`NAME` of the fabric (the topology.shoal.io/block label's value)"}),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef(c, "export k8s-labels takes no arguments")
					}
					if c.String("block") == "" {
						return usagef(c, "--block: give a name")
					}
					t, err := exportTopology(c)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(c, t.Labels(c.String("block")))
					}
					return t.K8sLabels(c.App.Writer, c.String("block"))
				},
			},
		},
	}
}

// exportTopology reads the nodes and the network matrix from the agent and
// builds the exported topology.
func exportTopology(c *cli.Context) (topoexport.Topology, error) {
	r := c.Float64("slow-ratio")
	if !(r > 0 && r < 1) {
		return topoexport.Topology{}, usagef(c, "--slow-ratio %v: use a ratio between 0 and 1", r)
	}
	cl, err := newClient(c)
	if err != nil {
		return topoexport.Topology{}, err
	}
	nodes, pairs, err := clusterNet(c.Context, cl)
	if err != nil {
		return topoexport.Topology{}, apiError(err)
	}
	t, err := topologyOf(nodes, pairs, r)
	if err != nil {
		return t, cli.Exit(err.Error(), exitFailure)
	}
	return t, nil
}

func clusterNet(ctx context.Context, cl *api.Client) ([]api.Node, []api.NetPair, error) {
	nodes, err := cl.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	pairs, err := cl.Net(ctx)
	return nodes, pairs, err
}

// topologyOf is the pure part of the export: the nodes' switches as the
// API gives them and each node's link from the measured pairs.
func topologyOf(nodes []api.Node, pairs []api.NetPair, ratio float64) (topoexport.Topology, error) {
	if len(nodes) == 0 {
		return topoexport.Topology{}, fmt.Errorf("export: the cluster lists no node")
	}
	switches := map[string]string{}
	known := false
	for _, n := range nodes {
		switches[n.Name] = n.Switch
		known = known || n.Switch != ""
	}
	if !known {
		return topoexport.Topology{}, fmt.Errorf("export: no node's switch is known yet: declare them (shoal agent --switch) or wait for the first bandwidth cycle, from which the leader infers them")
	}
	var ms []netmodel.Measurement
	for _, p := range pairs {
		if p.BWMbps == nil {
			continue
		}
		m := netmodel.Measurement{A: p.From, B: p.To, AvailMbps: *p.BWMbps, BWAt: max(p.MeasuredAt.UnixNano(), 1)}
		if p.PeakMbps != nil {
			m.PeakMbps = *p.PeakMbps
		}
		ms = append(ms, m)
	}
	links := topoexport.Links(switches, ms)
	in := make([]topoexport.Node, 0, len(nodes))
	for _, n := range nodes {
		in = append(in, topoexport.Node{Name: n.Name, Switch: n.Switch, Inferred: n.SwitchInferred, LinkMbps: links[n.Name]})
	}
	return topoexport.Build(in, ratio), nil
}
