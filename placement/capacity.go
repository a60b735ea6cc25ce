package placement

import (
	"math"
	"strings"
)

// LogicalCores is the paper's coreCount_v: logical cores when reported,
// else physical.
func (n *Node) LogicalCores() int {
	if n.Threads > 0 {
		return n.Threads
	}
	return n.Cores
}

// loadPerCore is the load per logical core, the overload signal.
func loadPerCore(n *Node) float64 {
	c := n.LogicalCores()
	if c == 0 {
		return math.Inf(1)
	}
	return currentLoad(n) / float64(c)
}

// currentLoad is the 1-minute load average, or the latest sample when it
// is lower: load that has stopped frees its cores at the next sample, not
// a minute later.
func currentLoad(n *Node) float64 { return min(n.Load.M1, n.Load.Now) }

// paperPC is Eq. 3 verbatim: pc_v = coreCount_v - ceil(Load_v) % coreCount_v,
// with Load_v the 1-minute load average. The modulo makes a node whose load is a
// multiple of its core count look idle; the paper policy keeps that on purpose.
func paperPC(n *Node) int {
	c := n.LogicalCores()
	if c == 0 {
		return 0
	}
	return c - int(math.Ceil(n.Load.M1))%c
}

// freePC is Eq. 3 without the wrap-around: a node whose load reaches its core
// count has no free core. Every policy but paper uses it.
func freePC(n *Node) int {
	return max(0, n.LogicalCores()-int(math.Ceil(currentLoad(n))))
}

// slotsFor turns a node's effective processor count into the slots a policy may
// fill: less the slots shoal jobs hold, divided among processes of CPUsPerProc
// cores each, replaced by PPN when the user gives one, and capped by the PEs
// each process needs.
func slotsFor(n *Node, pc int, r *Request) int {
	s := max(0, pc-n.HeldSlots)
	if c := r.CPUsPerProc; c > 1 {
		s /= c
	}
	if r.PPN > 0 {
		s = r.PPN
	}
	if c, ok := peCapacity(n, r.PEs); ok {
		s = min(s, c)
	}
	return s
}

// roomFor is slotsFor's count before it is clamped at 0: how many
// processes the node takes before it is oversubscribed, negative by the
// processes shoal jobs already hold there beyond its free cores. Where
// oversubscription goes (spill) reads it; a PPN fixes it as it fixes the
// slots.
func roomFor(n *Node, r *Request) int {
	if r.PPN > 0 {
		return slotsFor(n, 0, r)
	}
	s := n.LogicalCores() - int(math.Ceil(currentLoad(n))) - n.HeldSlots
	if c := r.CPUsPerProc; c > 1 {
		// Whole processes of c cores, rounded down: -1 is short of one process's cores.
		s = int(math.Floor(float64(s) / float64(c)))
	}
	if c, ok := peCapacity(n, r.PEs); ok {
		s = min(s, c)
	}
	return s
}

// peCount is how many elements of kind the node has.
func peCount(n *Node, kind string) int {
	t := 0
	for _, p := range n.PEs {
		if strings.EqualFold(p.Kind, kind) {
			t += p.Count
		}
	}
	return t
}

// hasPEs reports whether the node can run at least one process of the job. "cpu"
// needs are met by every node: logical cores are already the slot count.
func hasPEs(n *Node, needs []PENeed) (missing string, ok bool) {
	for _, nd := range needs {
		k := strings.ToLower(strings.TrimSpace(nd.Kind))
		if k == "cpu" {
			continue
		}
		if peCount(n, k) < max(1, nd.PerProc) {
			return k, false
		}
	}
	return "", true
}

// peCapacity is how many processes the node's PEs allow (ok false: no cap).
func peCapacity(n *Node, needs []PENeed) (int, bool) {
	c, capped := math.MaxInt, false
	for _, nd := range needs {
		k := strings.ToLower(strings.TrimSpace(nd.Kind))
		if k == "cpu" || nd.PerProc == 0 {
			continue
		}
		c, capped = min(c, peCount(n, k)/nd.PerProc), true
	}
	return c, capped
}
