package placement

import "github.com/shoal-hpc/shoal/nodestate"

// computeLoads returns each node's compute load. With shares false it is
// CL_v (Eq. 1) verbatim, the paper policy's: every Table-1 attribute is
// divided by its sum over these nodes, maximisation attributes are
// complemented against the largest normalised value, and the results are
// summed with the SAW weights. Time-varying attributes enter once per
// running-mean horizon, each horizon normalised on its own, weighted by the
// horizon weights.
//
// With shares true (shoal's T) a node's load, CPU utilisation and used memory
// count by how busy the node is, not by how its figure compares with the
// others': load as the share of its logical cores, utilisation as the share
// of 100 %, used memory as the share of its memory (Eq. 1's "memory
// available" weight, complemented; Eq. 1 when any node's total is unknown),
// each at most 1 and divided by the node count, which is what Eq. 1's sum
// gives when every node is equally busy. Eq. 1 magnifies the differences
// between idle nodes: a load of 0.03 against 0.07 on two idle 2-core nodes
// counts as 1 against 2.3, and on the testbed that decided a placement onto a
// degraded link (docs/design/placement.md, "the compute load as how busy a
// node is"). Node flow leaves T's compute load when the network term reads
// each node's traffic per direction (every link rate known, linkMbps being
// each node's fastest measured peak, and the nodes reporting
// NetRxBytesPerSec/NetTxBytesPerSec): counting the same bytes here too made a
// node whose flow hurts no pair look busy. With the rates but no directions
// it is a share of the link (one node's 30 Mbit/s must not weigh as a
// saturated node's load merely because few nodes carry traffic), without the
// rates Eq. 1. The attributes of what a node has (cores, clock, memory) keep
// Eq. 1 in both.
//
// busy is the sum over the nodes of the shares' part of cl and busyWeight
// the sum of the weights that went into shares (both 0 with shares false):
// T's reference floors that part on its own (problem.setReferences).
func computeLoads(nodes []*Node, w *AttrWeights, shares bool, linkMbps []float64) (cl []float64, busy, busyWeight float64) {
	cl = make([]float64, len(nodes))
	if len(nodes) == 0 {
		return cl, 0, 0
	}
	vals := make([]float64, len(nodes))
	add := func(weight float64, maximise bool, get func(*Node) float64) {
		if weight == 0 {
			return
		}
		sum := 0.0
		for i, n := range nodes {
			vals[i] = get(n)
			sum += vals[i]
		}
		if sum == 0 {
			return // every node equal at zero: the attribute cannot rank them
		}
		top := 0.0
		for i := range vals {
			vals[i] /= sum
			top = max(top, vals[i])
		}
		for i, v := range vals {
			if maximise {
				v = top - v
			}
			cl[i] += weight * v
		}
	}
	hs := w.Now + w.M1 + w.M5 + w.M15
	horizons := []struct {
		w   float64
		get func(nodestate.Means) float64
	}{
		{w.Now / hs, func(m nodestate.Means) float64 { return m.Now }},
		{w.M1 / hs, func(m nodestate.Means) float64 { return m.M1 }},
		{w.M5 / hs, func(m nodestate.Means) float64 { return m.M5 }},
		{w.M15 / hs, func(m nodestate.Means) float64 { return m.M15 }},
	}
	// Node flow: the network term's when it sees every node's traffic per
	// direction (every link rate known and the nodes report
	// NetRxBytesPerSec/NetTxBytesPerSec, as agents do); a share of the node's
	// link when only the rates are known; Eq. 1 otherwise.
	flowShare := shares && allMeasured(linkMbps, len(nodes))
	flowSeen := flowShare && directional(nodes)
	memKnown := true
	for _, n := range nodes {
		memKnown = memKnown && n.MemTotal > 0
	}
	if shares {
		busyWeight = w.Load + w.CPUUtil
		if memKnown {
			busyWeight += w.MemAvail
		}
		if flowShare && !flowSeen {
			busyWeight += w.NetFlow
		}
	}
	for _, h := range horizons {
		get := h.get
		// In shoal's T a mean counts no more than the latest sample (for
		// memory: no less), so work that has stopped stops counting at
		// the next sample, however long the window it stood in: a 15-
		// minute mean held a job that had just left the best nodes
		// against them for 15 minutes, and the next job avoided them.
		// Eq. 1 (the paper policy) keeps its means as they are.
		now, upTo := get, get
		if shares {
			now = func(m nodestate.Means) float64 { return min(get(m), m.Now) }
			upTo = func(m nodestate.Means) float64 { return max(get(m), m.Now) }
		}
		if shares {
			busy += addShare(cl, w.Load*h.w, nodes, func(i int) float64 {
				return shareOf(now(nodes[i].Load), float64(max(1, nodes[i].LogicalCores())))
			})
			busy += addShare(cl, w.CPUUtil*h.w, nodes, func(i int) float64 { return shareOf(now(nodes[i].CPUUtil), 100) })
		} else {
			add(w.Load*h.w, false, func(n *Node) float64 { return get(n.Load) })
			add(w.CPUUtil*h.w, false, func(n *Node) float64 { return get(n.CPUUtil) })
		}
		switch {
		case flowSeen:
		case flowShare:
			busy += addShare(cl, w.NetFlow*h.w, nodes, func(i int) float64 {
				return shareOf(now(nodes[i].NetFlow)*8/1e6, linkMbps[i])
			})
		default:
			add(w.NetFlow*h.w, false, func(n *Node) float64 { return get(n.NetFlow) })
		}
		if shares && memKnown {
			busy += addShare(cl, w.MemAvail*h.w, nodes, func(i int) float64 {
				total := float64(nodes[i].MemTotal)
				return shareOf(total-upTo(nodes[i].MemAvail), total)
			})
		} else {
			add(w.MemAvail*h.w, true, func(n *Node) float64 { return get(n.MemAvail) })
		}
	}
	add(w.Users, false, func(n *Node) float64 { return float64(n.Users) })
	add(w.Cores, true, func(n *Node) float64 { return float64(n.LogicalCores()) })
	add(w.MHz, true, func(n *Node) float64 { return n.MHz })
	add(w.MemTotal, true, func(n *Node) float64 { return float64(n.MemTotal) })
	return cl, busy, busyWeight
}

// directional reports whether the nodes report their traffic per direction:
// an agent gossips NetRxBytesPerSec and NetTxBytesPerSec with every sample,
// so one node with either above 0 says they all do. With none, every node is
// quiet now or the snapshot predates directions; either way the network term
// has no traffic to read, and node flow stays in the compute load.
func directional(nodes []*Node) bool {
	for _, n := range nodes {
		if n.NetRxBytesPerSec > 0 || n.NetTxBytesPerSec > 0 {
			return true
		}
	}
	return false
}

// allMeasured reports whether every one of n nodes has a known link rate.
func allMeasured(linkMbps []float64, n int) bool {
	if len(linkMbps) != n {
		return false
	}
	for _, r := range linkMbps {
		if !(r > 0) {
			return false
		}
	}
	return true
}

// shareOf is used out of capacity, between 0 and 1: a negative figure (a
// stale sample showing more memory free than the total) uses nothing, an
// overloaded node uses all of it.
func shareOf(used, capacity float64) float64 { return min(1, max(0, used/capacity)) }

// addShare adds weight times each node's share divided by the node count
// (see computeLoads) and returns the sum it added.
func addShare(cl []float64, weight float64, nodes []*Node, share func(i int) float64) float64 {
	if weight == 0 {
		return 0
	}
	sum := 0.0
	for i := range nodes {
		v := weight * share(i) / float64(len(nodes))
		cl[i] += v
		sum += v
	}
	return sum
}
