package placement

import (
	"math"
	"slices"

	"github.com/shoal-hpc/shoal/internal/natsort"
)

// rankOrder lists a chosen group in the order its ranks are numbered:
// the decision's host order is the hostfile's, and Open MPI and MPICH
// give ranks to hosts in hostfile order. Stencil and halo codes
// (LAMMPS's processor grid) exchange with neighbouring ranks, and small
// collectives (recursive doubling, rings) pair ranks by number, so
// interleaving switches in that order puts neighbouring ranks across the
// uplinks however good the group: on the queue12 testbed the same six
// nodes of two switches ran up to twice as long interleaved as in switch
// order (docs/design/placement.md, "the rank order").
//
// The order keeps network-near nodes contiguous:
//   - nodes of one switch (Node.Switch, declared or inferred) form a
//     block, in natural name order within it, as an administrator names
//     them and Slurm lists them; a node without a switch is a block of
//     its own, so without known switches the chain below runs over nodes
//     and the pair costs alone bring near nodes together;
//   - the blocks form a chain: it starts at the most peripheral block,
//     the one whose distances to the other blocks sum highest, and each
//     next block is the one nearest to the block before it; a distance is
//     a median pair cost between the switches' nodes (blockCosts).
//
// Costs within a third of each other are taken as equal (chainTie), and
// then the block whose first node comes first by name goes first: the
// order an administrator gave the switches, where the measurements
// cannot tell the chain. The first host is therefore the first node by
// name of the most peripheral block (of the one named first among
// blocks about as peripheral): it is the job's head, where the leader
// records the attempt's head and mpiexec runs (raftfsm takes the first
// host when the placement names no head), and it holds rank 0. The fill
// is not touched: the counts move with their nodes, so which node gets
// how many processes is what the policy decided.
func (p *problem) rankOrder(g, procs []int) ([]int, []int) {
	if len(g) < 2 {
		return g, procs
	}
	blocks := p.switchBlocks(g)
	order := chainBlocks(p.blockCosts(blocks), len(blocks))
	og, op := make([]int, 0, len(g)), make([]int, 0, len(g))
	count := make([]int, len(p.nodes))
	for x, i := range g {
		count[i] = procs[x]
	}
	for _, b := range order {
		for _, i := range blocks[b] {
			og, op = append(og, i), append(op, count[i])
		}
	}
	return og, op
}

// switchBlocks splits g into its declared switches, each in natural name
// order, a node without a switch alone; the blocks are listed by their
// first node's name.
func (p *problem) switchBlocks(g []int) [][]int {
	byName := func(x, y int) int { return natsort.Compare(p.nodes[x].Name, p.nodes[y].Name) }
	sorted := slices.Clone(g)
	slices.SortStableFunc(sorted, byName)
	var blocks [][]int
	at := map[string]int{}
	for _, i := range sorted {
		sw := p.nodes[i].Switch
		if b, ok := at[sw]; ok && sw != "" {
			blocks[b] = append(blocks[b], i)
			continue
		}
		at[sw] = len(blocks)
		blocks = append(blocks, []int{i})
	}
	return blocks
}

// switchSample bounds the nodes whose pairs stand for a switch in the
// distance between two switches (64 pairs at most).
const switchSample = 8

// blockCosts is the distance between every two blocks, row-major: the
// median pair cost between their samples (blockSamples). The cost is NL
// as the policy reads it, Eq. 2 verbatim for paper (which reads no
// traffic and no uplink term, so its decision, order included, is the
// same with or without a network model), T's NL for the others.
func (p *problem) blockCosts(blocks [][]int) []float64 {
	net := p.net
	if p.paperNL != nil {
		net = p.paperNL
	}
	smp := p.blockSamples(blocks)
	nb := len(blocks)
	d := make([]float64, nb*nb)
	var costs []float64
	for a := range nb {
		for b := a + 1; b < nb; b++ {
			if len(smp[a]) == 1 && len(smp[b]) == 1 { // nodes without a switch: their pair
				d[a*nb+b] = net.cost(smp[a][0], smp[b][0])
				continue
			}
			costs = costs[:0]
			for _, i := range smp[a] {
				for _, j := range smp[b] {
					costs = append(costs, net.cost(i, j))
				}
			}
			slices.Sort(costs)
			m := costs[len(costs)/2]
			if len(costs)%2 == 0 {
				m = (m + costs[len(costs)/2-1]) / 2
			}
			d[a*nb+b] = m
		}
	}
	mirror(d, nb)
	return d
}

// mirror copies the upper triangle of the nb*nb matrix d to the lower
// one, a tile at a time: written a column at a time, the lower half of a
// matrix of 1,000 blocks (8 MB) would miss the cache at nearly every cost.
func mirror(d []float64, nb int) {
	const tile = 64
	for a0 := 0; a0 < nb; a0 += tile {
		for b0 := a0; b0 < nb; b0 += tile {
			for a := a0; a < min(a0+tile, nb); a++ {
				for b := max(b0, a+1); b < min(b0+tile, nb); b++ {
					d[b*nb+a] = d[a*nb+b]
				}
			}
		}
	}
}

// blockSamples lists, for each block, the nodes whose pairs measure its
// distance to the others: a switch's nodes in the group, then its other
// eligible nodes in the byte order of their names, up to switchSample; a block without a switch
// is its one node. The distance is the switches', not the few nodes the
// group holds there: with one node of a switch in the group, that node's
// own link (a slow port, or the traffic a job that just ended left in its
// latest sample) would otherwise make its switch look far from every
// other and start the chain in the middle (on queue12 n08's did, and
// sw1's ranks followed sw3's across both uplinks). The median keeps one
// such node among several from moving it.
func (p *problem) blockSamples(blocks [][]int) [][]int {
	out := make([][]int, len(blocks))
	of := map[string]int{}
	inG := map[int]bool{}
	for b, blk := range blocks {
		out[b] = slices.Clone(blk[:min(len(blk), switchSample)])
		if sw := p.nodes[blk[0]].Switch; sw != "" {
			of[sw] = b
		}
		for _, i := range blk {
			inG[i] = true
		}
	}
	if len(of) == 0 {
		return out
	}
	for i, nd := range p.nodes {
		if b, ok := of[nd.Switch]; ok && !inG[i] && len(out[b]) < switchSample {
			out[b] = append(out[b], i)
		}
	}
	return out
}

// chainTie is how close two costs must be, as a share of the larger,
// for the chain to take them as equal and go by the names. Bandwidth
// tests of equal links read up to a third apart on the testbed
// (queue12's sw2 pairs, all 100 Mbit/s, 73-108 Mbit/s in one view), and
// a path over two uplinks of one rate measures as one over one: there
// the measurements cannot tell the chain, and the names, the order an
// administrator gave the switches, do. Two uplinks sharing their
// bandwidth cost two to four times one, well apart.
const chainTie = 1.0 / 3

// chainBlocks orders nb blocks (nb*nb costs d) as a nearest-neighbour
// chain from the most peripheral one; of the blocks whose figure is
// within chainTie of the best, the lowest index (the earlier first name)
// is taken.
func chainBlocks(d []float64, nb int) []int {
	// d is symmetric with a zero diagonal: each pair is read once, and
	// every sum still adds its row's costs in column order, as a sum over
	// the whole row would.
	sums := make([]float64, nb)
	for a := range nb {
		row := d[a*nb : (a+1)*nb]
		for b := a + 1; b < nb; b++ {
			sums[a] += row[b]
			sums[b] += row[b]
		}
	}
	far := 0.0
	for _, s := range sums {
		far = max(far, s)
	}
	start := 0
	for a := range nb {
		if near(sums[a], far) {
			start = a
			break
		}
	}
	// The blocks not yet chained, in index order: each step reads only
	// those, so the chain costs about nb²/2 reads of d, not 2nb².
	rest := make([]int, 0, nb-1)
	for b := range nb {
		if b != start {
			rest = append(rest, b)
		}
	}
	order := append(make([]int, 0, nb), start)
	for len(rest) > 0 {
		row := d[order[len(order)-1]*nb:][:nb]
		least := math.Inf(1)
		for _, b := range rest {
			least = min(least, row[b])
		}
		for k, b := range rest {
			if near(row[b], least) {
				order = append(order, b)
				rest = slices.Delete(rest, k, k+1)
				break
			}
		}
	}
	return order
}

// near tells whether two costs are within chainTie of the larger.
func near(a, b float64) bool { return math.Abs(a-b) <= chainTie*max(math.Abs(a), math.Abs(b)) }
