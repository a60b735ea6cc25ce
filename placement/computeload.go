package placement

// computeLoads returns CL_v (Eq. 1) for the given nodes: every Table-1 attribute
// is divided by its sum over these nodes, maximisation attributes are complemented
// against the largest normalised value, and the results are summed with the SAW
// weights. Time-varying attributes enter once per running-mean horizon, each
// horizon normalised on its own, weighted by the horizon weights.
func computeLoads(nodes []*Node, w *AttrWeights) []float64 {
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
	for _, h := range horizons {
		get := h.get
		add(w.Load*h.w, false, func(n *Node) float64 { return get(n.Load) })
		add(w.CPUUtil*h.w, false, func(n *Node) float64 { return get(n.CPUUtil) })
		add(w.NetFlow*h.w, false, func(n *Node) float64 { return get(n.NetFlow) })
		add(w.MemAvail*h.w, true, func(n *Node) float64 { return get(n.MemAvail) })
	}
	add(w.Users, false, func(n *Node) float64 { return float64(n.Users) })
	add(w.Cores, true, func(n *Node) float64 { return float64(logicalCores(n)) })
	add(w.MHz, true, func(n *Node) float64 { return n.MHz })
	add(w.MemTotal, true, func(n *Node) float64 { return float64(n.MemTotal) })
	return cl
}
