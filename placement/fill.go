package placement

import "container/heap"

// fillInOrder gives each node of the ordered group up to its slots; what is left
// when the group is full goes round-robin in group order, one process at a time,
// which is GERBIL's round_robin once every node's free size is zero.
func fillInOrder(g []int, slots []int, n int) []int {
	procs := make([]int, len(g))
	left := n
	for x, i := range g {
		t := min(slots[i], left)
		procs[x] = t
		left -= t
	}
	if left > 0 && len(g) > 0 {
		each, extra := left/len(g), left%len(g)
		for x := range procs {
			procs[x] += each
			if x < extra {
				procs[x]++
			}
		}
	}
	return procs
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
