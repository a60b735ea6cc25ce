package placement

// explainPairsMax bounds the groups whose pairs the breakdown lists: 16
// nodes are 120 pairs; a 1,000-node job's half million would swamp the
// answer they are meant to explain.
const explainPairsMax = 16

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
			a, ok := p.net.avail(i, j)
			if ok {
				b.MeasuredPairs++
				sum += a
			}
			if len(g) <= explainPairsMax {
				b.PairScores = append(b.PairScores, PairScore{A: p.nodes[i].Name, B: p.nodes[j].Name,
					OfferMbps: a, Measured: ok, Cost: p.net.cost(i, j)})
			}
		}
	}
	if b.MeasuredPairs > 0 {
		b.MeanAvailMbps = sum / float64(b.MeasuredPairs)
	}
}
