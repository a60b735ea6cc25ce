package topoexport

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shoal-hpc/shoal/internal/natsort"
	"github.com/shoal-hpc/shoal/netmodel"
)

// DefaultSlowRatio: a node whose link measures below half its switch's
// median is on a slow link.
const DefaultSlowRatio = 0.5

// Node is one node as the exports need it.
type Node struct {
	Name string
	// Switch is the node's switch as shoal holds it: declared (--switch)
	// or inferred (netmodel.InferredPrefix + its smallest member); "" when
	// unknown.
	Switch string
	// Inferred is true when Switch was inferred, not declared.
	Inferred bool
	// LinkMbps is the node's link as measured against peers on its own
	// switch (see Links); 0 when not measured.
	LinkMbps float64
}

// Switch is one leaf switch of the export.
type Switch struct {
	// Name as written in the files: the switch's own name, with an
	// inferred switch's "~" spelt "shoal-" and any character Slurm's
	// hostlists or Kubernetes' label values do not take spelt "-".
	Name string `json:"name"`
	// Shoal is the name shoal holds; "" for a node whose switch is unknown
	// (it gets a leaf of its own, Name "unknown-NODE").
	Shoal    string `json:"shoal_name,omitempty"`
	Inferred bool   `json:"inferred,omitempty"`
	// Nodes in natural order (n2 before n10).
	Nodes []string `json:"nodes"`
	// MedianMbps is the median link of its measured nodes; 0 when none.
	MedianMbps float64 `json:"median_mbps"`
}

// Slow is a node on a link well below its switch's.
type Slow struct {
	Node       string  `json:"node"`
	Switch     string  `json:"switch"`
	LinkMbps   float64 `json:"link_mbps"`
	MedianMbps float64 `json:"median_mbps"`
	// Weight is the slurm.conf node weight that makes Slurm take the
	// node last: 100 × MedianMbps / LinkMbps, rounded.
	Weight int `json:"weight"`
}

// Topology is the cluster as exported: leaf switches (natural order) and
// the nodes on slow links.
type Topology struct {
	Switches []Switch `json:"switches"`
	Slow     []Slow   `json:"slow"`
	// SlowRatio is the threshold the slow nodes were found with.
	SlowRatio float64 `json:"slow_ratio"`
	// Skipped are nodes whose names no Slurm hostlist or Kubernetes node
	// name takes (anything but letters, digits, '-', '_' and '.'): left
	// out rather than written into a config file or a shell line.
	Skipped []string `json:"skipped,omitempty"`
}

// Build groups nodes by switch and finds the slow links: a node whose
// LinkMbps is below ratio times its switch's median (ratio <= 0 or >= 1
// means DefaultSlowRatio). A node of unknown switch gets a leaf of its
// own, since Slurm's tree must hold every node and nothing says whom it
// is near.
func Build(nodes []Node, ratio float64) Topology {
	if !(ratio > 0 && ratio < 1) {
		ratio = DefaultSlowRatio
	}
	t := Topology{SlowRatio: ratio, Switches: []Switch{}, Slow: []Slow{}}
	at := map[string]int{}
	taken := map[string]bool{}
	links := map[string]float64{}
	for _, n := range nodes {
		if !hostName(n.Name) {
			t.Skipped = append(t.Skipped, n.Name)
			continue
		}
		links[n.Name] = n.LinkMbps
		key := n.Switch
		if key == "" {
			key = "\x00" + n.Name // a leaf of its own, never merged with a named switch
		}
		i, ok := at[key]
		if !ok {
			name := "unknown-" + n.Name
			if n.Switch != "" {
				name = n.Switch
				if rest, ok := strings.CutPrefix(name, netmodel.InferredPrefix); ok {
					name = "shoal-" + rest
				}
			}
			name = unique(sanitize(name), taken)
			i = len(t.Switches)
			at[key] = i
			t.Switches = append(t.Switches, Switch{Name: name, Shoal: n.Switch, Inferred: n.Inferred})
		}
		t.Switches[i].Nodes = append(t.Switches[i].Nodes, n.Name)
	}
	slices.SortFunc(t.Switches, func(a, b Switch) int { return natsort.Compare(a.Name, b.Name) })
	for i := range t.Switches {
		s := &t.Switches[i]
		natsort.Sort(s.Nodes)
		var measured []float64
		for _, n := range s.Nodes {
			if links[n] > 0 {
				measured = append(measured, links[n])
			}
		}
		s.MedianMbps = median(measured)
		for _, n := range s.Nodes {
			if l := links[n]; l > 0 && l < ratio*s.MedianMbps {
				t.Slow = append(t.Slow, Slow{Node: n, Switch: s.Name, LinkMbps: l, MedianMbps: s.MedianMbps,
					Weight: int(math.Round(100 * s.MedianMbps / l))})
			}
		}
	}
	return t
}

// slow returns the node's Slow entry, if it is on a slow link.
func (t Topology) slow(node string) (Slow, bool) {
	for _, s := range t.Slow {
		if s.Node == node {
			return s, true
		}
	}
	return Slow{}, false
}

// Links is each node's link as the network model measures it: the best
// latest test against a peer on its own switch (on one switch a pair runs
// at the slower of its two links, so a node's best pair is its own link).
// The latest test rather than the best ever: a cable that degraded
// yesterday is slow now. switches maps nodes to their switch ("" or
// absent: unknown); nodes with no such test are left out.
func Links(switches map[string]string, ms []netmodel.Measurement) map[string]float64 {
	asg := netmodel.Assignment{}
	for n, s := range switches {
		asg[n] = netmodel.Switch{Name: s}
	}
	m := netmodel.Build(asg, ms, netmodel.DefaultConfig())
	out := map[string]float64{}
	for n := range switches {
		if avail, _, ok := m.NodeCapacity(n); ok && avail > 0 {
			out[n] = avail
		}
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// sanitize keeps what both a Slurm switch name and a Kubernetes label
// value take: letters, digits, '-', '_' and '.', starting and ending with
// a letter or digit, at most 63 characters.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	s = string(b)
	if len(s) > 63 {
		s = s[:63]
	}
	s = strings.TrimFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') })
	if s == "" {
		s = "x"
	}
	return s
}

// hostName is whether s is a name the files may hold as it is.
func hostName(s string) bool {
	return s != "" && len(s) <= 253 && sanitize(s) == s
}

// unique returns name, or name-2, name-3... if two switches' names came
// out the same once sanitised, and records it as taken.
func unique(name string, taken map[string]bool) string {
	out := name
	for k := 2; taken[out]; k++ {
		out = name + "-" + strconv.Itoa(k)
	}
	taken[out] = true
	return out
}
