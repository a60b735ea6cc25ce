package netns

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Topology describes an emulated cluster: switches (Linux bridges), nodes
// attached to them, uplinks between switches and optional background load.
// It is read from JSON with [LoadTopology] or [ParseTopology] and checked by
// [Topology.Validate]; [Up] validates it again before touching the host.
type Topology struct {
	// Name is free text for logs (e.g. "lab12").
	Name string `json:"name,omitempty"`
	// Switches are the Linux bridges; at least one.
	Switches []Switch `json:"switches"`
	// Nodes are the emulated machines, one network namespace each; at least one,
	// at most [MaxNodes].
	Nodes []Node `json:"nodes"`
	// Uplinks join pairs of switches. They must form a forest (no cycles):
	// the bridges run without STP, so a loop would be a broadcast storm.
	Uplinks []Uplink `json:"uplinks,omitempty"`
	// Flows are background iperf3 transfers started by Up and stopped by Close.
	Flows []Flow `json:"flows,omitempty"`
	// Hogs are busy-looping processes started by Up on named nodes.
	Hogs []Hog `json:"hogs,omitempty"`
	// Changes are link-rate changes scheduled during an experiment (a link
	// that degrades mid-run). Up does not apply them: the driver that
	// owns the schedule (cmd/shoal-experiment) applies each one with
	// [Testbed.SetNodeRates] when its time comes, and logs it.
	Changes []Change `json:"changes,omitempty"`
	// JobSizes, when set, is the experiment's queue of job sizes in ranks
	// (cmd/shoal-experiment): the steady state's repetitions take them in
	// turn, back to back, instead of one size for every job.
	JobSizes []int `json:"job_sizes,omitempty"`
}

// Switch is one Linux bridge in the testbed's fabric namespace.
type Switch struct {
	// Name identifies the switch in Node.Switch and Uplink.A/B; [a-z][a-z0-9-]*, at most 32 bytes.
	Name string `json:"name"`
}

// Node is one emulated machine: a network namespace with one interface
// (eth0) on its switch and its own hostname (Name) for every process run
// through [Testbed.Command] or [Testbed.Start].
type Node struct {
	// Name is the node's hostname; [a-z][a-z0-9-]*, at most 32 bytes, unique.
	Name string `json:"name"`
	// Switch is the name of the switch the node is plugged into.
	Switch string `json:"switch"`
	// Mbit is the link rate in Mbit/s (10^6 bit/s), applied with tbf in both
	// directions of the node's veth (the node's egress, and the switch
	// port's egress toward the node). Must be > 0 unless Unshaped is set.
	Mbit int `json:"mbit,omitempty"`
	// MbitIn, when > 0, is the rate toward the node (what it receives),
	// and Mbit is then only the rate away from it (what it sends): an
	// asymmetric link. 0: Mbit both ways. Not with Unshaped.
	MbitIn int `json:"mbit_in,omitempty"`
	// Unshaped leaves the link at veth speed (several Gbit/s); Mbit must then be 0.
	Unshaped bool `json:"unshaped,omitempty"`
	// Load is background load the node reports (its 1-, 5- and 15-minute
	// load average, on top of its hogs) without burning CPU: the other
	// users of a shared cluster, on a host whose 2 cores could not give
	// every emulated node real load of its own. Only readers that take
	// the node's /proc from testcluster/lab see it. 0 to 64.
	Load float64 `json:"load,omitempty"`
}

// Uplink is a veth pair joining two switches, shaped in both directions.
type Uplink struct {
	// A and B are the switch names; A != B.
	A string `json:"a"`
	B string `json:"b"`
	// Mbit is the uplink rate in Mbit/s; must be > 0 unless Unshaped is set.
	// With MbitBA set it is the rate from A to B only.
	Mbit int `json:"mbit,omitempty"`
	// MbitBA, when > 0, is the rate from B to A (an asymmetric uplink);
	// 0: Mbit both ways. Not with Unshaped.
	MbitBA int `json:"mbit_ba,omitempty"`
	// Unshaped leaves the uplink at veth speed; Mbit must then be 0.
	Unshaped bool `json:"unshaped,omitempty"`
}

// Flow is a background iperf3 TCP transfer from node From to node To that
// runs from Up until Close.
type Flow struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Mbit caps the flow's sending rate in Mbit/s (iperf3 -b); 0 sends as fast
	// as the path allows. Must be >= 0.
	Mbit int `json:"mbit,omitempty"`
	// UDP sends datagrams at Mbit (iperf3 -u) instead of TCP: a flow
	// that does not back off when other traffic joins its path, as a
	// stream at a fixed rate, so what it leaves to others is fixed too.
	// Needs Mbit > 0.
	UDP bool `json:"udp,omitempty"`
}

// Hog busy-loops Workers processes on Node from Up until Close.
//
// All namespaces share the host's CPUs and its load average: a hog slows the
// whole machine, not only its node, and every node's /proc/loadavg shows it.
type Hog struct {
	Node string `json:"node"`
	// Workers is the number of busy loops; >= 1.
	Workers int `json:"workers"`
	// Nice is the hogs' nice value (0 to 19); 0 by default.
	Nice int `json:"nice,omitempty"`
}

// Change sets a node's link rates at a scheduled time of an experiment.
type Change struct {
	// AtS is when, in seconds from the start of the driver's schedule
	// (for cmd/shoal-experiment: the first steady-state repetition); > 0.
	AtS float64 `json:"at_s"`
	// Node is the node whose link changes.
	Node string `json:"node"`
	// Mbit is the new rate away from the node (and toward it unless MbitIn
	// is set); > 0.
	Mbit int `json:"mbit"`
	// MbitIn, when > 0, is the new rate toward the node.
	MbitIn int `json:"mbit_in,omitempty"`
}

// In is the node's rate toward it (MbitIn, or Mbit when MbitIn is 0).
func (n Node) In() int {
	if n.MbitIn > 0 {
		return n.MbitIn
	}
	return n.Mbit
}

// BA is the uplink's rate from B to A (MbitBA, or Mbit when MbitBA is 0).
func (u Uplink) BA() int {
	if u.MbitBA > 0 {
		return u.MbitBA
	}
	return u.Mbit
}

// In is the rate toward the node after the change.
func (c Change) In() int {
	if c.MbitIn > 0 {
		return c.MbitIn
	}
	return c.Mbit
}

// ParseTopology decodes a JSON topology, rejecting unknown fields, and
// validates it.
func ParseTopology(data []byte) (Topology, error) {
	var topo Topology
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&topo); err != nil {
		return Topology{}, fmt.Errorf("decode topology: %w", err)
	}
	if err := topo.Validate(); err != nil {
		return Topology{}, err
	}
	return topo, nil
}

// LoadTopology reads and validates a JSON topology file.
func LoadTopology(path string) (Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Topology{}, fmt.Errorf("read topology %s: %w", path, err)
	}
	topo, err := ParseTopology(data)
	if err != nil {
		return Topology{}, fmt.Errorf("topology %s: %w", path, err)
	}
	return topo, nil
}
