package placement

// computeLoads returns CL_v (Eq. 1) for the given nodes: every Table-1 attribute
// is divided by its sum over these nodes, maximisation attributes are complemented
// against the largest normalised value, and the results are summed with the SAW
// weights. Time-varying attributes enter once per running-mean horizon, each
// horizon normalised on its own, weighted by the horizon weights.
//
// linkMbps, when given, is each node's link rate (its fastest measured
// peak, 0 when unknown) and changes node flow for shoal's T (not the paper
// policy's Eq. 1): a node's flow counts as the share of its link it uses
// (at most 1), divided by the node count, which is what Eq. 1's sum gives
// when every link is full. On nearly idle links it keeps 30 Mbit/s on a
// 200 Mbit/s link from weighing as much as a saturated node, which the sum
// normalisation does when few nodes carry any traffic. The pairwise
// available bandwidth (NL) already sees the traffic; this term only says
// "this node's link is busy". If any node has no measured link, every node
// keeps Eq. 1.
func computeLoads(nodes []*Node, w *AttrWeights, linkMbps []float64) []float64 {
	cl := make([]float64, len(nodes))
	if len(nodes) == 0 {
		return cl
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
		get func(Means) float64
	}{
		{w.Now / hs, func(m Means) float64 { return m.Now }},
		{w.M1 / hs, func(m Means) float64 { return m.M1 }},
		{w.M5 / hs, func(m Means) float64 { return m.M5 }},
		{w.M15 / hs, func(m Means) float64 { return m.M15 }},
	}
	share := flowShares(nodes, linkMbps)
	for _, h := range horizons {
		get := h.get
		add(w.Load*h.w, false, func(n *Node) float64 { return get(n.Load) })
		add(w.CPUUtil*h.w, false, func(n *Node) float64 { return get(n.CPUUtil) })
		if share != nil {
			addShare(cl, w.NetFlow*h.w, nodes, func(i int) float64 { return share(i, get(nodes[i].NetFlow)) })
		} else {
			add(w.NetFlow*h.w, false, func(n *Node) float64 { return get(n.NetFlow) })
		}
		add(w.MemAvail*h.w, true, func(n *Node) float64 { return get(n.MemAvail) })
	}
	add(w.Users, false, func(n *Node) float64 { return float64(n.Users) })
	add(w.Cores, true, func(n *Node) float64 { return float64(logicalCores(n)) })
	add(w.MHz, true, func(n *Node) float64 { return n.MHz })
	add(w.MemTotal, true, func(n *Node) float64 { return float64(n.MemTotal) })
	return cl
}

// flowShares returns, when every node has a known link rate, the share of
// its link a node's flow (bytes/s in+out) uses, capped at 1; nil otherwise.
func flowShares(nodes []*Node, linkMbps []float64) func(i int, flow float64) float64 {
	if len(linkMbps) != len(nodes) {
		return nil
	}
	for _, r := range linkMbps {
		if !(r > 0) {
			return nil
		}
	}
	return func(i int, flow float64) float64 {
		return min(1, max(0, flow)*8/1e6/linkMbps[i])
	}
}

// addShare adds weight times each node's share divided by the node count
// (see computeLoads).
func addShare(cl []float64, weight float64, nodes []*Node, share func(i int) float64) {
	if weight == 0 {
		return
	}
	for i := range nodes {
		cl[i] += weight * share(i) / float64(len(nodes))
	}
}
