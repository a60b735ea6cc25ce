package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
)

// partitionFlags set a partition's fields; each is left as it was when
// not given (update), or at its zero (create).
func partitionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "nodes", Usage: "its nodes, a host `LIST` (n[01-08],gpu1); empty: every node"},
		&cli.BoolFlag{Name: "default", Usage: "the partition of jobs that name none"},
		&cli.StringFlag{Name: "max-time", Usage: "the longest time limit a job may ask (Slurm's formats or a duration; UNLIMITED: none)"},
		&cli.StringFlag{Name: "default-time", Usage: "the limit of a job that asks none (default: --max-time)"},
		&cli.IntFlag{Name: "max-nodes", Usage: "the most nodes one job may take, `N`; 0: no bound"},
		&cli.StringFlag{Name: "allow-users", Usage: "only these users (comma-separated) may submit; empty: everyone"},
		&cli.BoolFlag{Name: "no-oversubscribe", Usage: "refuse jobs that ask to share cores"},
		&cli.Float64Flag{Name: "load-threshold", Usage: "load per core above which its nodes count as overloaded, `X` (0: the cluster's, 1.0)"},
	}
}

func partitionCommand() *cli.Command {
	set := func(create bool) cli.ActionFunc {
		return func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "give one partition name")
			}
			name := c.Args().First()
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			parts, err := cl.Partitions(c.Context)
			if err != nil {
				return apiError(err)
			}
			i := slices.IndexFunc(parts, func(p api.Partition) bool { return p.Name == name })
			var p api.Partition
			switch {
			case create && i >= 0:
				return cli.Exit(fmt.Sprintf("partition %s exists: change it with 'shoal partition update %s'", name, name), exitUsage)
			case !create && i < 0:
				return cli.Exit(fmt.Sprintf("no partition %s: make it with 'shoal partition create %s'", name, name), exitUsage)
			case !create:
				p = parts[i]
			}
			p.Name = name
			if err := applyPartitionFlags(c, &p); err != nil {
				return err
			}
			got, err := cl.SetPartition(c.Context, p)
			if err != nil {
				return apiError(err)
			}
			if c.Bool("json") {
				return printJSON(c, got)
			}
			writePartitions(c, []api.Partition{got})
			return nil
		}
	}
	return &cli.Command{
		Name:  "partition",
		Usage: "create, change or delete a partition: a named set of nodes with limits (root or the cluster token)",
		Description: `Partitions are Slurm's: jobs name one with --partition (-p in a #SBATCH line)
or get the default, and run on its nodes only, within its limits. With none,
every job may run on every node. They are in raft: every agent sees them.

Examples:
  shoal partition create debug --nodes 'n[01-04]' --max-time 30:00 --default
  shoal partition create gpu --nodes 'gpu[1-2]' --allow-users alice,bob
  shoal partition update debug --max-nodes 2
  shoal partition delete debug`,
		Subcommands: []*cli.Command{
			{Name: "create", Usage: "make a new partition", ArgsUsage: "NAME",
				Description: "Example:\n  shoal partition create debug --nodes 'n[01-04]' --max-time 30:00 --default",
				Flags:       append(append(clientFlags(), jsonFlag()), partitionFlags()...), Action: set(true)},
			{Name: "update", Usage: "change a partition's fields (those given)", ArgsUsage: "NAME",
				Description: "Example:\n  shoal partition update debug --max-time 1:00:00 --load-threshold 2",
				Flags:       append(append(clientFlags(), jsonFlag()), partitionFlags()...), Action: set(false)},
			{Name: "delete", Usage: "remove a partition no queued or running job is in", ArgsUsage: "NAME",
				Description: "Example:\n  shoal partition delete debug", Flags: clientFlags(),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usagef(c, "give one partition name")
					}
					cl, err := newClient(c)
					if err != nil {
						return err
					}
					if err := cl.DeletePartition(c.Context, c.Args().First()); err != nil {
						return apiError(err)
					}
					fmt.Fprintf(c.App.ErrWriter, "shoal: partition %s deleted\n", c.Args().First())
					return nil
				}},
		},
	}
}

// applyPartitionFlags sets the fields of p the flags give.
func applyPartitionFlags(c *cli.Context, p *api.Partition) error {
	if c.IsSet("nodes") {
		p.Nodes = nil
		if l := c.String("nodes"); l != "" {
			hs, err := jobfmt.ExpandHosts(l)
			if err != nil {
				return usagef(c, "--nodes %q: %v", l, err)
			}
			p.Nodes = hs
		}
	}
	if c.IsSet("default") {
		p.Default = c.Bool("default")
	}
	for _, f := range []struct {
		flag string
		to   *time.Duration
	}{{"max-time", &p.MaxTime}, {"default-time", &p.DefaultTime}} {
		if !c.IsSet(f.flag) {
			continue
		}
		d, err := parseTimeLimit(c.String(f.flag))
		if err != nil {
			return usagef(c, "--%s: %v", f.flag, err)
		}
		*f.to = d
	}
	if c.IsSet("max-nodes") {
		p.MaxNodes = c.Int("max-nodes")
	}
	if c.IsSet("allow-users") {
		p.AllowUsers = nil
		for _, u := range strings.Split(c.String("allow-users"), ",") {
			if u = strings.TrimSpace(u); u != "" {
				p.AllowUsers = append(p.AllowUsers, u)
			}
		}
	}
	if c.IsSet("no-oversubscribe") {
		p.NoOversubscribe = c.Bool("no-oversubscribe")
	}
	if c.IsSet("load-threshold") {
		p.LoadThreshold = c.Float64("load-threshold")
	}
	return nil
}

func partitionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "partitions",
		Usage: "list the partitions",
		Description: `Lists the partitions by name: their nodes and limits ('*' marks the default).

Examples:
  shoal partitions
  shoal partitions --json | jq '.[] | select(.default) | .name'`,
		Flags: append(clientFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			cl, err := newClient(c)
			if err != nil {
				return err
			}
			parts, err := cl.Partitions(c.Context)
			if err != nil {
				return apiError(err)
			}
			if c.Bool("json") {
				return printJSON(c, parts)
			}
			writePartitions(c, parts)
			return nil
		},
	}
}

func writePartitions(c *cli.Context, parts []api.Partition) {
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tNODES\tMAX_TIME\tDEFAULT_TIME\tMAX_NODES\tUSERS\tOVERSUBSCRIBE\tLOAD_THRESHOLD")
	for _, p := range parts {
		name := p.Name
		if p.Default {
			name += "*"
		}
		nodes := jobfmt.CompressHosts(p.Nodes)
		if nodes == "" {
			nodes = "ALL"
		}
		users := strings.Join(p.AllowUsers, ",")
		if users == "" {
			users = "ALL"
		}
		maxNodes := "UNLIMITED"
		if p.MaxNodes > 0 {
			maxNodes = strconv.Itoa(p.MaxNodes)
		}
		over := "YES"
		if p.NoOversubscribe {
			over = "NO"
		}
		load := "default"
		if p.LoadThreshold > 0 {
			load = strconv.FormatFloat(p.LoadThreshold, 'f', -1, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, nodes, slurmTimeLimit(p.MaxTime), slurmTimeLimit(p.DefaultTime), maxNodes, users, over, load)
	}
	tw.Flush()
}
