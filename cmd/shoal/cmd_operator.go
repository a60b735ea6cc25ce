package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/snapfile"
)

// operatorCommand is `shoal operator`: backups of the cluster state and
// raft repair, as Nomad's and Consul's operator commands.
func operatorCommand() *cli.Command {
	return &cli.Command{
		Name:  "operator",
		Usage: "cluster maintenance: state snapshots, raft peers",
		Description: `Examples:
  shoal operator snapshot save backup.snap
  shoal operator raft list-peers`,
		Subcommands: []*cli.Command{
			{
				Name:  "snapshot",
				Usage: "save or restore a copy of the cluster's replicated state",
				Description: `Examples:
  shoal operator snapshot save backup.snap
  shoal operator snapshot restore backup.snap`,
				Subcommands: []*cli.Command{
					{
						Name:      "save",
						Usage:     "write a consistent copy of the cluster's state (jobs, settings, drains) to FILE",
						ArgsUsage: "FILE",
						Description: `Taken on the raft leader after everything committed so far. The file holds
every job's environment: it is written mode 0600. Root or the cluster token only.

Example:
  shoal operator snapshot save /var/backups/shoal-$(date +%F).snap`,
						Flags: clientFlags(),
						Action: func(c *cli.Context) error {
							if c.NArg() != 1 || c.Args().First() == "" {
								return usagef(c, "save takes one file name, e.g. 'shoal operator snapshot save backup.snap'")
							}
							path := c.Args().First()
							cl, err := newClient(c)
							if err != nil {
								return err
							}
							file, err := cl.SnapshotSave(c.Context)
							if err != nil {
								return apiError(err)
							}
							h, _, err := snapfile.Decode(file)
							if err != nil {
								return cli.Exit("the agent sent a bad snapshot: "+err.Error(), exitFailure)
							}
							if err := writeFileAtomic(path, file); err != nil {
								return cli.Exit(err.Error(), exitFailure)
							}
							fmt.Fprintf(c.App.Writer, "saved the state at raft index %d (%d bytes) to %s\n", h.RaftIndex, len(file), path)
							return nil
						},
					},
					{
						Name:      "restore",
						Usage:     "replace the cluster's state with the one saved in FILE",
						ArgsUsage: "FILE",
						Description: `Every job, setting and drain of the cluster is replaced by the file's; the
cluster keeps its own nodes and raft configuration, so a backup restores into a
fresh cluster. A truncated, corrupt or foreign file is refused and nothing
changes. Root or the cluster token only.

Example:
  shoal operator snapshot restore /var/backups/shoal-2026-11-24.snap`,
						Flags: clientFlags(),
						Action: func(c *cli.Context) error {
							if c.NArg() != 1 || c.Args().First() == "" {
								return usagef(c, "restore takes one file name, e.g. 'shoal operator snapshot restore backup.snap'")
							}
							path := c.Args().First()
							file, err := os.ReadFile(path)
							if err != nil {
								return cli.Exit(fmt.Sprintf("read snapshot: %v", err), exitUsage)
							}
							if _, _, err := snapfile.Decode(file); err != nil {
								return cli.Exit(fmt.Sprintf("%s: refused: %v; nothing was changed", path, err), exitUsage)
							}
							cl, err := newClient(c)
							if err != nil {
								return err
							}
							res, err := cl.SnapshotRestore(c.Context, file)
							if err != nil {
								return apiError(err)
							}
							fmt.Fprintf(c.App.Writer, "restored the state saved at raft index %d: %d jobs\n", res.RaftIndex, res.Jobs)
							return nil
						},
					},
				},
			},
			{
				Name:  "raft",
				Usage: "raft's configuration, for the rare manual repair",
				Description: `Examples:
  shoal operator raft list-peers
  shoal operator raft remove-peer node7`,
				Subcommands: []*cli.Command{
					{
						Name:  "list-peers",
						Usage: "list the servers of raft's configuration",
						Description: `One row per server: its ID, address, suffrage (voter or nonvoter) and
whether it leads.

Examples:
  shoal operator raft list-peers
  shoal operator raft list-peers --json`,
						Flags: append(clientFlags(), jsonFlag()),
						Action: func(c *cli.Context) error {
							if c.NArg() > 0 {
								return usagef(c, "list-peers takes no arguments")
							}
							cl, err := newClient(c)
							if err != nil {
								return err
							}
							peers, err := cl.RaftPeers(c.Context)
							if err != nil {
								return apiError(err)
							}
							if c.Bool("json") {
								return printJSON(c, peers)
							}
							tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
							fmt.Fprintln(tw, "ID\tADDRESS\tVOTER\tLEADER")
							for _, p := range peers {
								fmt.Fprintf(tw, "%s\t%s\t%t\t%t\n", safe(p.ID), safe(p.Address), p.Voter, p.Leader)
							}
							return tw.Flush()
						},
					},
					{
						Name:      "remove-peer",
						Usage:     "remove a server that is gone for good from raft's configuration",
						ArgsUsage: "ID",
						Description: `The leader removes dead voters by itself after --dead-voter-grace; this is
for the case it cannot (no quorum left to agree, or a server that will never
come back and must go now). Root or the cluster token only.

Example:
  shoal operator raft remove-peer node7`,
						Flags: clientFlags(),
						Action: func(c *cli.Context) error {
							if c.NArg() != 1 || c.Args().First() == "" {
								return usagef(c, "remove-peer takes one server ID (see 'shoal operator raft list-peers')")
							}
							cl, err := newClient(c)
							if err != nil {
								return err
							}
							if err := cl.RemovePeer(c.Context, c.Args().First()); err != nil {
								return apiError(err)
							}
							fmt.Fprintf(c.App.Writer, "removed %s from raft's configuration\n", safe(c.Args().First()))
							return nil
						},
					},
				},
			},
		},
	}
}

// writeFileAtomic writes data to path (mode 0600) through a temporary file
// renamed over it, so a failed save never leaves half a backup.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	return nil
}
