package raftfsm

import (
	"cmp"
	"time"
)

// Probe kinds: each runs as its own supervised process on every node, so a probe that
// crashes or hangs is relaunched without the agent.
const (
	ProbeNodeState = "nodestate"
	ProbeLatency   = "latency"
	ProbeBandwidth = "bandwidth"
)

// ProbeKinds lists the probe kinds in a fixed order.
var ProbeKinds = []string{ProbeNodeState, ProbeLatency, ProbeBandwidth}

func knownProbeKind(k string) bool {
	for _, p := range ProbeKinds {
		if p == k {
			return true
		}
	}
	return false
}

// ProbeKey names one probe process of one node.
type ProbeKey struct {
	Node string `json:"node"`
	Kind string `json:"kind"`
}

func (k ProbeKey) compare(o ProbeKey) int {
	if c := cmp.Compare(k.Node, o.Node); c != 0 {
		return c
	}
	return cmp.Compare(k.Kind, o.Kind)
}

// Probe is the desired state of one probe process: the leader bumps Generation to order a
// relaunch, and the node's reconciler restarts the process when the generation it runs is older.
// A probe never relaunched has no record (generation 0).
type Probe struct {
	ProbeKey
	Generation    uint64    `json:"generation"`
	Restarts      int       `json:"restarts"`
	LastReason    string    `json:"last_reason,omitempty"`
	LastRestartAt time.Time `json:"last_restart_at,omitzero"`
}

// ProbeDuties is the leader's bandwidth-test schedule for one cycle: in each round every node is
// in at most one pair, so no test shares a node's link with another (seed 002's n/2 pairs a round).
type ProbeDuties struct {
	Cycle  uint64   `json:"cycle"`
	Rounds [][]Test `json:"rounds,omitempty"`
	// RoundLen is the time given to one round in nanoseconds; 0 lets nodes pace themselves.
	RoundLen time.Duration `json:"round_len,omitempty"`
	// SetAt is when the leader recorded these duties; round r runs from SetAt + r*RoundLen.
	SetAt time.Time `json:"set_at,omitzero"`
}

// Test is one bandwidth test between two nodes, ordered: From sends to
// To. (An unordered pair of nodes is a probeplan.Pair.)
type Test struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (d ProbeDuties) clone() ProbeDuties {
	c := d
	if d.Rounds != nil {
		c.Rounds = make([][]Test, len(d.Rounds))
		for i, r := range d.Rounds {
			c.Rounds[i] = cloneSlice(r)
		}
	}
	return c
}
