package placement

import "math"

// paperPolicy is seed 002 §3.3 exactly: one candidate per start node (Alg. 1)
// and the candidate with the least T of Eq. 4 (Alg. 2). Capacity is Eq. 3
// verbatim. Nodes with pc_v = 0 can host nothing and are left out of the
// candidates (unless every node has pc_v = 0).
type paperPolicy struct{}

// candidates runs Alg. 1 from every start and returns, per start, C and N of
// its group; want(got, size) says when a group is complete.
func (paperPolicy) candidates(p *problem, want func(slots, size int) bool) (starts []int, cs, ns []float64) {
	u := usable(p.paperPC)
	h := &alg1Heap{}
	for _, v := range u {
		if !p.work.spend(len(u)) {
			break
		}
		g := alg1(p, v, u, want, h)
		c, n := costsOn(p.paperNL, p.paperCL, g)
		starts, cs, ns = append(starts, v), append(cs, c), append(ns, n)
	}
	return starts, cs, ns
}

// best is Alg. 2: the least T = alpha*C/sum(C) + beta*N/sum(N) over the candidates.
func best(alpha float64, cs, ns []float64) (int, float64) {
	var sc, sn float64
	for i := range cs {
		sc += cs[i]
		sn += ns[i]
	}
	bi, bt := 0, math.Inf(1)
	for i := range cs {
		t := 0.0
		if sc > 0 {
			t += alpha * cs[i] / sc
		}
		if sn > 0 {
			t += (1 - alpha) * ns[i] / sn
		}
		if t < bt {
			bi, bt = i, t
		}
	}
	return bi, bt
}

func (pp paperPolicy) choose(p *problem, want func(slots, size int) bool) ([]int, int, float64) {
	starts, cs, ns := pp.candidates(p, want)
	if len(starts) == 0 {
		return nil, 0, 0
	}
	bi, t := best(p.req.Alpha, cs, ns)
	g := alg1(p, starts[bi], usable(p.paperPC), want, &alg1Heap{})
	p.paperT = t
	return g, len(starts), t
}

func (pp paperPolicy) group(p *problem) ([]int, []int, int) {
	g, cands, _ := pp.choose(p, func(slots, _ int) bool { return slots >= p.n })
	return g, paperFill(p.work, g, p.paperPC, p.n), cands
}

func (pp paperPolicy) groupK(p *problem, k int) []int {
	g, _, _ := pp.choose(p, func(_, size int) bool { return size >= k })
	return g
}

// paperFill is Alg. 1's allocation: pc_u processes per node in the group's
// order, starting over at the first node while processes are left ("round
// robin when capacity runs out"). A group without any pc adds one per pass.
func paperFill(b *budget, g []int, pc []int, n int) []int {
	procs := make([]int, len(g))
	if len(g) == 0 {
		return procs
	}
	step := func(i int) int { return pc[i] }
	if sumOver(g, pc) == 0 {
		step = func(int) int { return 1 }
	}
	for left := n; left > 0 && b.spend(len(g)); {
		for x, i := range g {
			t := min(step(i), left)
			procs[x] += t
			left -= t
		}
	}
	return procs
}

func sumOver(g []int, xs []int) int {
	t := 0
	for _, i := range g {
		t += xs[i]
	}
	return t
}

// alg1 is Alg. 1 from start v over the nodes u: v first (A_v(v) = 0), then
// nodes by increasing A_v(u) = alpha*CL_u + beta*NL_(v,u), ties by name, until
// want is met. A heap pops only the prefix that is needed, which gives the same
// order as the paper's full sort at O(V + k log V) instead of O(V log V).
func alg1(p *problem, v int, u []int, want func(slots, size int) bool, h *alg1Heap) []int {
	alpha := p.req.Alpha
	h.items = h.items[:0]
	for _, w := range u {
		if w == v {
			continue
		}
		h.items = append(h.items, alg1Item{a: alpha*p.paperCL[w] + (1-alpha)*p.paperNL.cost(v, w), i: w})
	}
	h.init()
	g := []int{v}
	got := p.paperPC[v]
	for !want(got, len(g)) && len(h.items) > 0 {
		w := h.pop()
		g = append(g, w)
		got += p.paperPC[w]
	}
	return g
}

type alg1Item struct {
	a float64
	i int
}

// alg1Heap is a min-heap by (A, index); index order is name order.
type alg1Heap struct{ items []alg1Item }

func (h *alg1Heap) less(x, y int) bool {
	a, b := h.items[x], h.items[y]
	if a.a != b.a {
		return a.a < b.a
	}
	return a.i < b.i
}

func (h *alg1Heap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *alg1Heap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

func (h *alg1Heap) pop() int {
	top := h.items[0].i
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}
