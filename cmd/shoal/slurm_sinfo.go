package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/internal/natsort"
)

var sinfoOpts = []slurmOpt{
	{"noheader", 'h', false}, {"format", 'o', true}, {"Node", 'N', false}, {"nodes", 'n', true},
	{"states", 't', true}, {"partition", 'p', true}, {"long", 'l', false}, {"summarize", 's', false},
	{"all", 'a', false}, {"responding", 'r', false}, {"dead", 'd', false}, {"help", 0, false}, {"usage", 0, false},
}

const sinfoHelp = `sinfo lists the cluster's nodes by partition and state, as Slurm's sinfo does:
one line per state in each partition ('*' marks the default); a cluster with
no partition set shows one, "all", that holds every node.

States: idle (nothing runs there), mix (some of its CPUs taken), alloc (every
CPU taken), drng/drain (draining: running work ends, nothing new starts), down
(suspected or dead in gossip).

Options: -h/--noheader, -N/--Node (a line per node), -n/--nodes NODES,
-t/--states STATES, -r/--responding, -d/--dead, -o/--format (%P %a %l %D %t %T
%N %n %c %f %m %e %O %C), -p/--partition NAMES. -l, -s and -a are accepted.

Examples:
  sinfo
  sinfo -N -h -o "%N %t %c"
  sinfo -t idle -h -o %D`

// sinfoNode is one node as sinfo sees it, in one partition.
type sinfoNode struct {
	node      api.Node
	allocated int // CPUs taken by jobs that run on it
	part      api.Partition
}

// state is sinfo's long and short names of the node's state.
func (n sinfoNode) state() (long, short string) {
	switch {
	case n.node.Status != "alive":
		return "down", "down"
	case n.node.Drain == "draining":
		return "draining", "drng"
	case n.node.Drain != "":
		return "drained", "drain"
	case n.allocated == 0:
		return "idle", "idle"
	case n.allocated >= max(n.node.Threads, n.node.Cores, 1):
		return "allocated", "alloc"
	}
	return "mixed", "mix"
}

func (n sinfoNode) cpus() int { return max(n.node.Threads, n.node.Cores) }

// sinfoField is one field letter's value over a group of nodes.
func sinfoField(group []sinfoNode, letter byte) (string, bool) {
	first := sinfoNode{}
	if len(group) > 0 {
		first = group[0]
	}
	long, short := first.state()
	switch letter {
	case 'P':
		if first.part.Default {
			return first.part.Name + "*", true
		}
		return first.part.Name, true
	case 'R':
		return first.part.Name, true
	case 'a':
		return "up", true
	case 'l':
		if first.part.MaxTime > 0 {
			return slurmDuration(first.part.MaxTime), true
		}
		return "infinite", true
	case 'D':
		return strconv.Itoa(len(group)), true
	case 't':
		return short, true
	case 'T':
		return long, true
	case 'N', 'n':
		var names []string
		for _, g := range group {
			names = append(names, g.node.Name)
		}
		return jobfmt.CompressHosts(names), true
	case 'c':
		return strconv.Itoa(first.cpus()), true
	case 'f', 'b':
		if len(first.node.Features) == 0 {
			return "(null)", true
		}
		return strings.Join(first.node.Features, ","), true
	case 'm':
		return strconv.FormatUint(first.node.MemTotal>>20, 10), true
	case 'e':
		return strconv.FormatFloat(first.node.MemAvail.Now/(1<<20), 'f', 0, 64), true
	case 'O':
		return strconv.FormatFloat(first.node.Load.M1, 'f', 2, 64), true
	case 'C':
		var alloc, total int
		for _, g := range group {
			alloc, total = alloc+min(g.allocated, g.cpus()), total+g.cpus()
		}
		return fmt.Sprintf("%d/%d/0/%d", alloc, total-alloc, total), true
	case '%':
		return "%", true
	}
	return "", false
}

var sinfoHeaders = map[byte]string{
	'P': "PARTITION", 'R': "PARTITION", 'a': "AVAIL", 'l': "TIMELIMIT", 'D': "NODES", 't': "STATE", 'T': "STATE",
	'N': "NODELIST", 'n': "HOSTNAMES", 'c': "CPUS", 'f': "AVAIL_FEATURES", 'b': "ACTIVE_FEATURES", 'm': "MEMORY", 'e': "FREE_MEM", 'O': "CPU_LOAD", 'C': "CPUS(A/I/O/T)",
}

const (
	sinfoDefaultFormat = "%9P %.5a %.10l %.6D %.6t %N"
	sinfoNodeFormat    = "%N %.6D %9P %.6t"
)

func sinfo(c *cli.Context, args []string) error {
	a, err := parseSlurmArgs("sinfo", args, sinfoOpts)
	if err != nil {
		return cli.Exit(err.Error(), exitUsage)
	}
	if a.has("help") || a.has("usage") {
		writeHelp(c, sinfoHelp)
		return nil
	}
	format := sinfoDefaultFormat
	if a.has("Node") {
		format = sinfoNodeFormat
	}
	if a.has("format") {
		format = a.last("format")
	}
	pieces, err := parseSlurmFormat(format, func(l byte) bool { _, ok := sinfoField(nil, l); return ok })
	if err != nil {
		return cli.Exit("sinfo: "+err.Error(), exitUsage)
	}
	var only []string
	for _, l := range a.list("nodes") {
		names, err := jobfmt.ExpandHosts(l)
		if err != nil {
			return cli.Exit("sinfo: -n "+l+": "+err.Error(), exitUsage)
		}
		only = append(only, names...)
	}
	cl, err := newClient(c)
	if err != nil {
		return err
	}
	nodes, err := cl.Nodes(c.Context)
	if err != nil {
		return apiError(err)
	}
	js, err := cl.JobsWhere(c.Context, api.JobsQuery{States: []string{"launching", "running"}})
	if err != nil {
		return apiError(err)
	}
	alloc := map[string]int{}
	for _, j := range js {
		for _, h := range j.Hosts {
			alloc[h.Node] += h.Procs * max(j.Spec.CPUsPerRank, 1)
		}
	}
	parts, err := cl.Partitions(c.Context)
	if err != nil {
		return apiError(err)
	}
	if len(parts) == 0 {
		parts = []api.Partition{{Name: slurmPartition, Default: true}} // every node, as Slurm shows a cluster of one partition
	}
	if want := a.list("partition"); len(want) > 0 {
		parts = slices.DeleteFunc(parts, func(p api.Partition) bool { return !slices.Contains(want, p.Name) })
	}
	states := a.list("states")
	slices.SortFunc(nodes, func(x, y api.Node) int { return natsort.Compare(x.Name, y.Name) })
	var rows []sinfoNode // by partition as listed, then by node name
	for _, p := range parts {
		for _, n := range nodes {
			if n.Status == "left" || (len(only) > 0 && !slices.Contains(only, n.Name)) || (len(p.Nodes) > 0 && !slices.Contains(p.Nodes, n.Name)) {
				continue
			}
			rows = append(rows, sinfoNode{node: n, allocated: alloc[n.Name], part: p})
		}
	}
	kept := rows[:0]
	for _, sn := range rows {
		long, short := sn.state()
		switch {
		case a.has("responding") && long == "down", a.has("dead") && long != "down":
			continue
		case len(states) > 0 && !slices.ContainsFunc(states, func(s string) bool {
			s = strings.ToLower(s)
			return s == long || s == short || s == "all"
		}):
			continue
		}
		kept = append(kept, sn)
	}
	rows = kept
	var groups [][]sinfoNode
	if a.has("Node") {
		for _, r := range rows {
			groups = append(groups, []sinfoNode{r})
		}
	} else {
		// One line per partition and state (and features, when shown), in
		// the order they first appear.
		byFeature := slices.ContainsFunc(pieces, func(p formatPiece) bool { return p.letter == 'f' || p.letter == 'b' })
		byState := map[string]int{}
		for _, r := range rows {
			_, short := r.state()
			key := r.part.Name + "\x00" + short
			if byFeature {
				key += "\x00" + strings.Join(r.node.Features, ",")
			}
			i, ok := byState[key]
			if !ok {
				i = len(groups)
				byState[key] = i
				groups = append(groups, nil)
			}
			groups[i] = append(groups[i], r)
		}
	}
	if !a.has("noheader") {
		fmt.Fprintln(c.App.Writer, render(pieces, func(l byte) string { return sinfoHeaders[l] }))
	}
	for _, g := range groups {
		fmt.Fprintln(c.App.Writer, render(pieces, func(l byte) string { v, _ := sinfoField(g, l); return v }))
	}
	return nil
}
