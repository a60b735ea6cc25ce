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
	// directions of the node's veth. Must be > 0 unless Unshaped is set.
	Mbit int `json:"mbit,omitempty"`
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
	Mbit int `json:"mbit,omitempty"`
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
