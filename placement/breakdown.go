package placement

import (
	"cmp"
	"fmt"
	"slices"
)

// explainPairsMax bounds the groups whose pairs the breakdown lists: 16
// nodes are 120 pairs; a 1,000-node job's half million would swamp the
// answer they are meant to explain.
const explainPairsMax = 16

// explainCandidatesMax bounds the groups Breakdown.Considered lists.
const explainCandidatesMax = 8

// explain fills the breakdown of the final group.
func (p *problem) explain(b *Breakdown, g, procs, slots []int) {
	b.Nodes = make([]NodeScore, len(g))
	for x, i := range g {
		b.Nodes[x] = NodeScore{Node: p.nodes[i].Name, CL: p.cl[i], Slots: slots[i], NP: procs[x]}
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
	p.explainCandidates(b, g)
}

// explainCandidates lists the groups the policy compared beside the chosen
// one g, each scored with the same terms as the breakdown, best first.
func (p *problem) explainCandidates(b *Breakdown, g []int) {
	key := func(grp []int) string {
		s := slices.Clone(grp)
		slices.Sort(s)
		return fmt.Sprint(s)
	}
	chosen := key(g)
	seen := map[string]bool{}
	add := func(grp []int) {
		k := key(grp)
		if seen[k] {
			return
		}
		seen[k] = true
		c := Candidate{Chosen: k == chosen}
		for _, i := range grp {
			c.Nodes = append(c.Nodes, p.nodes[i].Name)
		}
		c.C, c.N = p.costs(grp)
		c.CNorm, c.NNorm = c.C/p.cref, c.N/p.nref
		c.T = b.Alpha*c.CNorm + b.Beta*c.NNorm
		b.Considered = append(b.Considered, c)
	}
	add(g)
	for _, grp := range p.considered {
		add(grp)
	}
	// By T, the chosen group first among equals.
	slices.SortStableFunc(b.Considered, func(x, y Candidate) int {
		if c := cmp.Compare(x.T, y.T); c != 0 {
			return c
		}
		return cmp.Compare(b2i(!x.Chosen), b2i(!y.Chosen))
	})
	if len(b.Considered) > explainCandidatesMax {
		keep := b.Considered[:explainCandidatesMax]
		if !slices.ContainsFunc(keep, func(c Candidate) bool { return c.Chosen }) {
			// A policy that does not minimise T may choose a group worse
			// than every one kept: the chosen group is always listed.
			keep[len(keep)-1] = b.Considered[slices.IndexFunc(b.Considered, func(c Candidate) bool { return c.Chosen })]
		}
		b.Considered = keep
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
