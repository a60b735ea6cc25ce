package placement

import (
	"cmp"
	"slices"
)

// Bounds of the netload search; see docs/design/placement.md for their measured effect.
const (
	poolMax   = 256 // clusters up to this many usable nodes are searched in full
	startMax  = 48  // greedy starts when the pool is larger than this
	polishTop = 3   // best greedy groups refined by local search
	maxMoves  = 256 // local-search moves per group
	// pairMoveBudget bounds the two-out-one-in moves per step (|G|^2 * pool).
	pairMoveBudget = 1 << 18
)

// netloadPolicy is shoal's default. It minimises the same T the breakdown
// reports, and differs from the paper's algorithm in four ways:
//   - additions are scored against the whole group chosen so far (the marginal
//     change of T), not only against the start node (it helped the greedy
//     under Eq. 2's NL; under T's own NL it gains
//     nothing on the ablation's clusters, where local search closes the gap);
//   - compute and network costs are scaled by the fixed references of T, so
//     alpha and beta weigh them as the user meant (Eq. 1 and 2's sum
//     normalisation makes NL ~V/2 times smaller than CL inside Alg. 1);
//   - the best greedy groups are refined by local search (drop a node, swap a
//     node in for one out) until no move lowers T;
//   - beyond poolMax nodes the search runs on a bounded pool (the least loaded
//     nodes plus the best of every switch) from at most startMax starts.
//
// Its capacity is Eq. 3 without the modulo wrap-around (freePC).
type netloadPolicy struct {
	// ablation switches, used by tests to measure each change
	startOnly, noPolish, unbounded bool
}

func (np netloadPolicy) group(p *problem) ([]int, []int, int) {
	u := usable(p.slots)
	if sumOver(u, p.slots) < p.n {
		g := byCL(p, u) // everything is needed; the least loaded get full shares
		return g, p.fillInOrder(g), 1
	}
	g, cands := np.search(p, np.pool(p, u, 2*p.n, 0), p.n, 0)
	g = byCL(p, g)
	return g, p.fillInOrder(g), cands
}

func (np netloadPolicy) groupK(p *problem, k int) []int {
	u := eligibleAll(p)
	if k >= len(u) {
		return byCL(p, u)
	}
	g, _ := np.search(p, np.pool(p, u, 0, 2*k), 0, k)
	return byCL(p, g)
}

func eligibleAll(p *problem) []int {
	u := make([]int, len(p.nodes))
	for i := range u {
		u[i] = i
	}
	return u
}

// byCL orders a group by compute load, so the partly filled node is the
// busiest; the decision lists the group in rank order after the fill (rankOrder).
func byCL(p *problem, g []int) []int {
	g = slices.Clone(g)
	slices.SortStableFunc(g, func(x, y int) int {
		if c := cmp.Compare(p.cl[x], p.cl[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return g
}

// pool bounds the search on large clusters. Nodes are ranked by what they would
// add to an average group on their own: their compute term plus k_ref-1 times
// the mean network cost of their measured pairs. The pool takes the best of
// every switch first (so a well-connected rack is never missed), then the best
// overall, until it has poolMax nodes, wantSlots slots and wantNodes nodes.
func (np netloadPolicy) pool(p *problem, u []int, wantSlots, wantNodes int) []int {
	if len(u) <= poolMax || np.unbounded {
		return u
	}
	order := slices.Clone(u)
	key := func(i int) float64 { return p.a*p.cl[i] + p.b*float64(p.kref-1)*p.net.nodeMean[i] }
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(key(x), key(y)); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	in := make([]bool, len(p.nodes))
	var pool []int
	slots := 0
	take := func(i int) {
		if !in[i] {
			in[i] = true
			pool = append(pool, i)
			slots += p.slots[i]
		}
	}
	perGroup := max(1, poolMax/(2*max(1, p.net.ng)))
	taken := make(map[int32]int)
	for _, i := range order {
		if g := p.net.group[i]; taken[g] < perGroup {
			taken[g]++
			take(i)
		}
	}
	for _, i := range order {
		if len(pool) >= poolMax && slots >= wantSlots && len(pool) >= wantNodes {
			break
		}
		take(i)
	}
	slices.Sort(pool)
	return pool
}

// search runs the greedy from several starts and polishes the best results.
// Exactly one of n (capacity) and k (node count) is set.
func (np netloadPolicy) search(p *problem, pool []int, n, k int) ([]int, int) {
	s := newSearch(p, pool, n, k)
	type result struct {
		t float64
		g []int
	}
	var res []result
	for _, st := range s.starts() {
		if !p.work.spend(s.P) {
			break
		}
		g := s.greedy(st, np.startOnly)
		res = append(res, result{s.value(g), g})
	}
	slices.SortStableFunc(res, func(x, y result) int { return cmp.Compare(x.t, y.t) })
	for ri := 0; ri < len(res) && len(p.considered) < explainCandidatesMax; ri++ {
		g := make([]int, len(res[ri].g))
		for x, l := range res[ri].g {
			g[x] = pool[l]
		}
		p.considered = append(p.considered, g)
	}
	best := result{t: -1}
	polished := 0
	for ri := 0; ri < len(res) && polished < polishTop; ri++ {
		if ri > 0 && slices.Equal(res[ri].g, res[ri-1].g) {
			continue
		}
		polished++
		g := res[ri].g
		if !np.noPolish {
			g = s.polish(g)
		}
		t := s.value(g)
		if best.t < 0 || t < best.t || (t == best.t && slices.Compare(g, best.g) < 0) {
			best = result{t, g}
		}
	}
	out := make([]int, len(best.g))
	for x, l := range best.g {
		out[x] = pool[l]
	}
	return out, len(res)
}

// search state over the pool, in pool-local indices; wc and wm are the compute
// and network terms of T, already weighted: T = sum wc + sum over pairs wm.
type search struct {
	p    *problem
	pool []int
	P    int
	wc   []float64
	wm   []float64 // P*P
	sl   []int
	n, k int
}

func newSearch(p *problem, pool []int, n, k int) *search {
	P := len(pool)
	s := &search{p: p, pool: pool, P: P, n: n, k: k,
		wc: make([]float64, P), wm: make([]float64, P*P), sl: make([]int, P)}
	for x, i := range pool {
		s.wc[x] = p.a * p.cl[i]
		s.sl[x] = p.slots[i]
		for y := x + 1; y < P; y++ {
			c := p.b * p.net.cost(i, pool[y])
			s.wm[x*P+y], s.wm[y*P+x] = c, c
		}
	}
	return s
}

// starts: every pool node when the pool is small, else the best nodes of each
// switch taken in turn, so every rack gets a start.
func (s *search) starts() []int {
	cand := make([]int, 0, s.P)
	for x := range s.P {
		if s.k > 0 || s.sl[x] > 0 {
			cand = append(cand, x)
		}
	}
	if len(cand) <= startMax {
		return cand
	}
	slices.SortStableFunc(cand, func(x, y int) int { return cmp.Compare(s.wc[x], s.wc[y]) })
	byGroup := map[int32][]int{}
	var groups []int32
	for _, x := range cand {
		g := s.p.net.group[s.pool[x]]
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], x)
	}
	var out []int
	for r := 0; len(out) < startMax; r++ {
		added := false
		for _, g := range groups {
			if r < len(byGroup[g]) && len(out) < startMax {
				out = append(out, byGroup[g][r])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

func (s *search) done(slots, size int) bool {
	if s.k > 0 {
		return size >= s.k
	}
	return slots >= s.n
}

// greedy grows a group from start st, adding the node that raises T least per
// useful slot (per node when counting nodes). With startOnly it scores an
// addition against the start node alone, as Alg. 1 does.
func (s *search) greedy(st int, startOnly bool) []int {
	inG := make([]bool, s.P)
	sum := make([]float64, s.P) // sum of wm to the group (or to the start)
	g := []int{st}
	inG[st] = true
	copy(sum, s.wm[st*s.P:(st+1)*s.P])
	got := s.sl[st]
	for !s.done(got, len(g)) {
		bx, bv := -1, 0.0
		for x := range s.P {
			if inG[x] || (s.k == 0 && s.sl[x] == 0) {
				continue
			}
			v := s.wc[x] + sum[x]
			if s.k == 0 {
				v /= float64(min(s.sl[x], s.n-got))
			}
			if bx < 0 || v < bv {
				bx, bv = x, v
			}
		}
		if bx < 0 {
			break
		}
		g = append(g, bx)
		inG[bx] = true
		got += s.sl[bx]
		if !startOnly {
			row := s.wm[bx*s.P : (bx+1)*s.P]
			for x := range sum {
				sum[x] += row[x]
			}
		}
	}
	slices.Sort(g)
	return g
}

// value is T of a group given in pool-local indices.
func (s *search) value(g []int) float64 {
	t := 0.0
	for a, x := range g {
		t += s.wc[x]
		for _, y := range g[a+1:] {
			t += s.wm[x*s.P+y]
		}
	}
	return t
}

// polish applies the best improving move until none is left: drop a node the
// capacity does not need, or swap a member for a non-member. Each move is
// evaluated in O(1) from the members' sums of network cost.
func (s *search) polish(g []int) []int {
	inG := make([]bool, s.P)
	sum := make([]float64, s.P)
	got := 0
	for _, x := range g {
		inG[x] = true
		got += s.sl[x]
		row := s.wm[x*s.P : (x+1)*s.P]
		for y := range sum {
			sum[y] += row[y]
		}
	}
	const eps = 1e-12
	for range maxMoves {
		bd, bx, by := -eps, -1, -1
		for x := range s.P {
			if !inG[x] {
				continue
			}
			if s.k == 0 && got-s.sl[x] >= s.n {
				if d := -(s.wc[x] + sum[x]); d < bd {
					bd, bx, by = d, x, -1
				}
			}
			for y := range s.P {
				if inG[y] || (s.k == 0 && (s.sl[y] == 0 || got-s.sl[x]+s.sl[y] < s.n)) {
					continue
				}
				d := s.wc[y] - s.wc[x] + sum[y] - s.wm[x*s.P+y] - sum[x]
				if d < bd {
					bd, bx, by = d, x, y
				}
			}
		}
		// Two members out, one in: the only way to a group with fewer, larger
		// nodes once capacity is tight. O(|G|^2 P), so only on small groups.
		bx2 := -1
		if s.k == 0 && len(g)*len(g)*s.P <= pairMoveBudget {
			members := members(inG)
			for a, x1 := range members {
				for _, x2 := range members[a+1:] {
					out := s.wc[x1] + s.wc[x2] + sum[x1] + sum[x2] - s.wm[x1*s.P+x2]
					for y := range s.P {
						if inG[y] || s.sl[y] == 0 || got-s.sl[x1]-s.sl[x2]+s.sl[y] < s.n {
							continue
						}
						d := s.wc[y] + sum[y] - s.wm[x1*s.P+y] - s.wm[x2*s.P+y] - out
						if d < bd {
							bd, bx, bx2, by = d, x1, x2, y
						}
					}
				}
			}
		}
		if bx < 0 {
			break
		}
		if bx2 >= 0 {
			inG[bx2] = false
			got -= s.sl[bx2]
			r2 := s.wm[bx2*s.P : (bx2+1)*s.P]
			for y := range sum {
				sum[y] -= r2[y]
			}
		}
		inG[bx] = false
		got -= s.sl[bx]
		rx := s.wm[bx*s.P : (bx+1)*s.P]
		for y := range sum {
			sum[y] -= rx[y]
		}
		if by >= 0 {
			inG[by] = true
			got += s.sl[by]
			ry := s.wm[by*s.P : (by+1)*s.P]
			for y := range sum {
				sum[y] += ry[y]
			}
		}
	}
	return members(inG)
}

func members(inG []bool) []int {
	var out []int
	for x, in := range inG {
		if in {
			out = append(out, x)
		}
	}
	return out
}
