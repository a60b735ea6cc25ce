package placement

import "container/heap"

// fillInOrder gives each node of the ordered group up to its free slots.
// What is left when the group is full is oversubscription, and it goes where
// it oversubscribes least (spill): a node already past its cores, by the
// processes shoal jobs hold there, takes more only once the others are as
// far past theirs. Giving the rest round-robin in group order instead, as
// GERBIL's round_robin does once every free size is zero, sent every
// single-process task of an array placed in one round to the same node
// once the cluster's free slots were taken, while the held slots
// elsewhere were no further past their cores.
func (p *problem) fillInOrder(g []int) []int {
	procs := make([]int, len(g))
	left := p.n
	for x, i := range g {
		t := min(p.slots[i], left)
		procs[x] = t
		left -= t
	}
	if left > 0 && len(g) > 0 {
		p.spill(g, procs, left)
	}
	return procs
}

// spill adds n processes to the group's counts one at a time, each to the
// node whose processes would then stand furthest below its logical cores,
// as a share of them: (room - procs - 1) / cores, room being what the node
// could take before oversubscribing (p.room, negative when shoal's held
// slots already exceed its free cores). Ties go to the earlier node, so on
// equal nodes it is GERBIL's round-robin.
func (p *problem) spill(g []int, procs []int, n int) {
	h := make(spillHeap, len(g))
	for x, i := range g {
		h[x] = spillItem{pos: x, room: p.room[i] - procs[x], cores: max(1, p.nodes[i].LogicalCores())}
	}
	heap.Init(&h)
	for ; n > 0; n-- {
		top := &h[0]
		procs[top.pos]++
		top.room--
		heap.Fix(&h, 0)
	}
}

type spillItem struct{ pos, room, cores int }
type spillHeap []spillItem

// Less compares what a node would have left after one more process, as a
// share of its cores, without division: (ra-1)/ca > (rb-1)/cb.
func (h spillHeap) Less(a, b int) bool {
	l, r := (h[a].room-1)*h[b].cores, (h[b].room-1)*h[a].cores
	if l != r {
		return l > r
	}
	return h[a].pos < h[b].pos
}
func (h spillHeap) Len() int      { return len(h) }
func (h spillHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *spillHeap) Push(x any)   { *h = append(*h, x.(spillItem)) }
func (h *spillHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// roundRobin is GERBIL's round_robin (seed 000, Alg. 1): one process at a time to
// the node with the most free slots left, re-sorting after each; ties go to the
// earlier node. It spreads a job over all listed nodes instead of filling them.
func roundRobin(b *budget, g []int, slots []int, n int) []int {
	procs := make([]int, len(g))
	if len(g) == 0 {
		return procs
	}
	h := &rrHeap{}
	for x, i := range g {
		*h = append(*h, rrItem{free: slots[i], pos: x})
	}
	heap.Init(h)
	for ; n > 0 && b.spend(1); n-- {
		top := &(*h)[0]
		procs[top.pos]++
		top.free--
		heap.Fix(h, 0)
	}
	return procs
}

type rrItem struct{ free, pos int }
type rrHeap []rrItem

func (h rrHeap) Len() int { return len(h) }
func (h rrHeap) Less(a, b int) bool {
	if h[a].free != h[b].free {
		return h[a].free > h[b].free
	}
	return h[a].pos < h[b].pos
}
func (h rrHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *rrHeap) Push(x any)   { *h = append(*h, x.(rrItem)) }
func (h *rrHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
