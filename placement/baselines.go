package placement

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/shoal-hpc/shoal/internal/natsort"
)

// The baselines of seed 002 §5, kept as user choices and as yardsticks.

// randomPolicy picks nodes in a seeded random order.
type randomPolicy struct{ seed int64 }

func (rp randomPolicy) order(p *problem) []int {
	o := eligibleAll(p)
	r := rand.New(rand.NewPCG(uint64(rp.seed), 0x5e0a1))
	r.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
	return o
}

func (rp randomPolicy) group(p *problem) ([]int, []int, int) {
	g := takeUntil(rp.order(p), p.slots, p.n)
	return g, p.fillInOrder(g), 1
}

func (rp randomPolicy) groupK(p *problem, k int) []int { return takeK(rp.order(p), p.slots, k) }

// sequentialPolicy starts at a seeded random node and takes its topological
// neighbours: nodes ordered by switch, then by name with numbers compared as
// numbers (node2 before node10), wrapping around at the end.
type sequentialPolicy struct{ seed int64 }

func (sp sequentialPolicy) order(p *problem) []int {
	o := eligibleAll(p)
	slices.SortStableFunc(o, func(x, y int) int {
		if c := cmp.Compare(p.nodes[x].Switch, p.nodes[y].Switch); c != 0 {
			return c
		}
		return natsort.Compare(p.nodes[x].Name, p.nodes[y].Name)
	})
	if len(o) == 0 {
		return o
	}
	r := rand.New(rand.NewPCG(uint64(sp.seed), 0x5e9))
	s := r.IntN(len(o))
	return append(o[s:], o[:s]...)
}

func (sp sequentialPolicy) group(p *problem) ([]int, []int, int) {
	g := takeUntil(sp.order(p), p.slots, p.n)
	return g, p.fillInOrder(g), 1
}

func (sp sequentialPolicy) groupK(p *problem, k int) []int {
	return takeK(sp.order(p), p.slots, k)
}

// loadPolicy takes the least loaded nodes (1-minute load per logical core).
type loadPolicy struct{}

func (loadPolicy) order(p *problem) []int {
	o := eligibleAll(p)
	slices.SortStableFunc(o, func(x, y int) int {
		if c := cmp.Compare(loadPerCore(p.nodes[x]), loadPerCore(p.nodes[y])); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return o
}

func (lp loadPolicy) group(p *problem) ([]int, []int, int) {
	g := takeUntil(lp.order(p), p.slots, p.n)
	return g, p.fillInOrder(g), 1
}

func (lp loadPolicy) groupK(p *problem, k int) []int { return takeK(lp.order(p), p.slots, k) }
