package topoexport

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// RootName is the switch SlurmTree joins the leaves under; "shoal-root"
// when a leaf is already called so.
const RootName = "root"

// SlurmTree writes a topology.conf for Slurm's topology/tree plugin: a
// SwitchName=... Nodes=... line per leaf switch and, with more than one
// leaf, a root SwitchName=... Switches=... joining them (Slurm places a
// job under the lowest switch that holds it). Each slow node is named in
// a comment line with the weight --weights would give it.
func (t Topology) SlurmTree(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# topology.conf for Slurm's topology/tree (slurm.conf: TopologyPlugin=topology/tree),")
	t.header(bw)
	var leaves []string
	for _, s := range t.Switches {
		fmt.Fprintf(bw, "SwitchName=%s Nodes=%s%s\n", s.Name, strings.Join(s.Nodes, ","), t.why(s))
		leaves = append(leaves, s.Name)
	}
	if len(leaves) > 1 {
		fmt.Fprintf(bw, "SwitchName=%s Switches=%s\n", t.root(), strings.Join(leaves, ","))
	}
	return bw.Flush()
}

// SlurmBlock writes a topology.conf for Slurm's topology/block plugin
// (Slurm 23.11 and later): a BlockName=... Nodes=... line per switch.
// When the blocks differ in size it adds BlockSizes= the smallest, so
// Slurm plans with a base block every switch can hold.
func (t Topology) SlurmBlock(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# topology.conf for Slurm's topology/block, Slurm 23.11 or later (slurm.conf: TopologyPlugin=topology/block),")
	t.header(bw)
	smallest, largest := 0, 0
	for i, s := range t.Switches {
		fmt.Fprintf(bw, "BlockName=%s Nodes=%s%s\n", s.Name, strings.Join(s.Nodes, ","), t.why(s))
		if i == 0 || len(s.Nodes) < smallest {
			smallest = len(s.Nodes)
		}
		largest = max(largest, len(s.Nodes))
	}
	if smallest != largest {
		fmt.Fprintf(bw, "BlockSizes=%d\n", smallest)
	}
	return bw.Flush()
}

// SlurmWeights writes NodeName=... Weight=... for each slow node, to put
// on that node's NodeName line of slurm.conf (Slurm refuses a node defined
// twice): Slurm allocates the lowest weight first, and the other nodes
// keep the default of 1.
func (t Topology) SlurmWeights(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# slurm.conf node weights from shoal's measured links: %d of %d nodes on a link below %g x their switch's median.\n",
		len(t.Slow), t.nodes(), t.SlowRatio)
	fmt.Fprintln(bw, "# Slurm takes the lowest Weight first; every other node keeps the default Weight=1.")
	fmt.Fprintln(bw, "# Put each Weight= on the node's own NodeName line (a node may be defined once).")
	for _, s := range t.Slow {
		fmt.Fprintf(bw, "NodeName=%s Weight=%d\n", s.Node, s.Weight)
	}
	return bw.Flush()
}

// Weights maps each slow node to its weight.
func (t Topology) Weights() map[string]int {
	out := map[string]int{}
	for _, s := range t.Slow {
		out[s.Node] = s.Weight
	}
	return out
}

// header writes the comment lines both topology.conf forms share: where
// the switches came from and one line per slow node.
func (t Topology) header(w io.Writer) {
	declared, inferred, unknown := 0, 0, 0
	for _, s := range t.Switches {
		switch {
		case s.Shoal == "":
			unknown++
		case s.Inferred:
			inferred++
		default:
			declared++
		}
	}
	fmt.Fprintf(w, "# written by shoal export: %d nodes on %d switches (%d declared with --switch, %d inferred from bandwidth tests, %d nodes of unknown switch).\n",
		t.nodes(), len(t.Switches), declared, inferred, unknown)
	if len(t.Skipped) > 0 {
		fmt.Fprintf(w, "# left out, not a host name: %d nodes\n", len(t.Skipped))
	}
	for _, s := range t.Slow {
		fmt.Fprintf(w, "# %s: link %.1f Mbit/s, below %g x %s's median %.1f Mbit/s: slow (slurm.conf NodeName=%s Weight=%d, see --weights)\n",
			s.Node, s.LinkMbps, t.SlowRatio, s.Switch, s.MedianMbps, s.Node, s.Weight)
	}
}

// why is a leaf's trailing comment: where its membership came from.
func (t Topology) why(s Switch) string {
	switch {
	case s.Shoal == "":
		return " # switch unknown (not declared, too few tests to infer): a leaf of its own"
	case s.Inferred:
		return " # inferred from the bandwidth tests"
	}
	return ""
}

func (t Topology) root() string {
	for _, s := range t.Switches {
		if s.Name == RootName {
			return "shoal-" + RootName
		}
	}
	return RootName
}

func (t Topology) nodes() int {
	n := 0
	for _, s := range t.Switches {
		n += len(s.Nodes)
	}
	return n
}
