// Package slurm runs a real Slurm cluster, Debian's slurm-wlm (22.05) and
// munge, on the network-namespace testbed (package netns), beside or
// instead of shoal's agents: one munged for every node (its key and socket
// in the cluster's directory), slurmctld in one node's namespace and a
// slurmd per node started as that node (`slurmd -N NODE`, NodeAddr its
// testbed address). It lets an experiment compare shoal's placement with
// Slurm's on the same links and the same programs. Needs root.
//
// # Use
//
//	c, err := slurm.Up(ctx, tb, slurm.Options{Dir: dir, CPUs: 2})
//	defer c.Close()
//	hosts, id, err := c.Alloc(ctx, 3, 1)   // salloc --no-shell -N 3 -n 3
//	...                                    // run on hosts
//	err = c.Release(ctx, id)
//	err = c.Configure(ctx, slurm.Config{Topology: conf})  // restart slurmctld with topology/tree
//	out, err := c.Client(ctx, "scontrol", "show", "topology")
//
// # The configuration, and why
//
// select/cons_tres (what topology/tree requires); proctrack/linuxproc and
// task/none, because cgroup plugins would need one cgroup hierarchy per
// node and this kind of host has a v1/v2 hybrid; every node's CPUs= as
// given (what shoal's agents report), with SlurmdParameters=config_overrides
// so that slurmd, which sees the host's CPUs from every namespace, does
// not get a node refused; no accounting; scheduler settings at Slurm's
// defaults unless Config.Extra says otherwise. State, spool, logs and
// pid files live in Options.Dir.
//
// Configure rewrites slurm.conf and topology.conf and restarts slurmctld
// with -c (slurmctld 22.05, switched from topology/none to topology/tree
// by `scontrol reconfigure`, reports the new plugin in `scontrol show
// config` but `scontrol show topology` lists no switch), then waits
// until every node has registered again and is idle: switching between
// Slurm's default placement and topology/tree takes a few seconds.
//
// Close stops every daemon it started (slurmctld, slurmd, munged), also
// when Up failed half-way; the testbed's own Close would kill them too.
package slurm
