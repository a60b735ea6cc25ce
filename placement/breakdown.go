package placement

// explain fills the breakdown of the final group.
func (p *problem) explain(b *Breakdown, g, procs, slots []int) {
	b.Nodes = make([]NodeScore, len(g))
	for x, i := range g {
		b.Nodes[x] = NodeScore{Node: p.nodes[i].Name, CL: p.cl[i], Slots: slots[i], Procs: procs[x]}
	}
	b.C, b.N = p.costs(g)
	b.CRef, b.NRef = p.cref, p.nref
	b.CNorm, b.NNorm = b.C/p.cref, b.N/p.nref
	b.T = b.Alpha*b.CNorm + b.Beta*b.NNorm
	b.PaperT = p.paperT
	sum := 0.0
	for x, i := range g {
		for _, j := range g[x+1:] {
			b.Pairs++
			if a, ok := p.net.avail(i, j); ok {
				b.MeasuredPairs++
				sum += a
			}
		}
	}
	if b.MeasuredPairs > 0 {
		b.MeanAvailMbps = sum / float64(b.MeasuredPairs)
	}
}
