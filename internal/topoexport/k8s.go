package topoexport

import (
	"bufio"
	"fmt"
	"io"
)

// The node labels K8sLabels sets. Kueue's Topology Aware Scheduling reads
// levels from the broadest to the narrowest: a Topology of levels
// LabelBlock, LabelSwitch, kubernetes.io/hostname keeps a workload's pods
// in one switch when it fits, else in one block.
const (
	// LabelBlock is the fabric: every node one shoal cluster measures,
	// since its switches are joined by uplinks (the root of SlurmTree).
	LabelBlock = "topology.shoal.io/block"
	// LabelSwitch is the node's leaf switch (SlurmTree's SwitchName).
	LabelSwitch = "topology.shoal.io/switch"
	// LabelSlowLink is "true" on a node whose link measures well below
	// its switch's (Topology.Slow), for a node affinity that avoids it;
	// K8sLabels removes it from every other node.
	LabelSlowLink = "topology.shoal.io/slow-link"
)

// NodeLabels is one node's labels, as --json prints them.
type NodeLabels struct {
	Node   string            `json:"node"`
	Labels map[string]string `json:"labels"`
}

// Labels gives every node its labels; block names the fabric.
func (t Topology) Labels(block string) []NodeLabels {
	block = sanitize(block)
	var out []NodeLabels
	for _, s := range t.Switches {
		for _, n := range s.Nodes {
			l := map[string]string{LabelBlock: block, LabelSwitch: s.Name}
			if _, slow := t.slow(n); slow {
				l[LabelSlowLink] = "true"
			}
			out = append(out, NodeLabels{Node: n, Labels: l})
		}
	}
	return out
}

// K8sLabels writes one `kubectl label node` line per node: block, switch,
// and the slow-link label set on slow nodes and removed from the others
// (so running the lines again after a cable is fixed clears it).
func (t Topology) K8sLabels(w io.Writer, block string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# Kubernetes node labels from shoal's switches (Kueue TAS levels: %s, %s, kubernetes.io/hostname);\n", LabelBlock, LabelSwitch)
	fmt.Fprintf(bw, "# %s=true marks a node whose link measures below %g x its switch's median.\n", LabelSlowLink, t.SlowRatio)
	for _, nl := range t.Labels(block) {
		slow := LabelSlowLink + "-"
		if nl.Labels[LabelSlowLink] == "true" {
			slow = LabelSlowLink + "=true"
		}
		fmt.Fprintf(bw, "kubectl label node %s --overwrite %s=%s %s=%s %s\n",
			nl.Node, LabelBlock, nl.Labels[LabelBlock], LabelSwitch, nl.Labels[LabelSwitch], slow)
	}
	return bw.Flush()
}
