package netmodel

import (
	"cmp"
	"slices"

	"github.com/shoal-hpc/shoal/probeplan"
)

// Switch is the switch a node is on and where that came from.
type Switch struct {
	// Name is the switch; "" when unknown (not declared, and too few
	// measurements to infer).
	Name string
	// Inferred is true when the name comes from the measurements, not
	// from the node's --switch.
	Inferred bool
}

// Assignment maps every node to its switch.
type Assignment map[string]Switch

// InferredPrefix starts the name of a switch no node declared: "~" and
// the smallest member's name, so a name is stable while that member stays.
const InferredPrefix = "~"

// Infer assigns every node of nodes a switch. A declared switch
// (declared[node] != "") is kept. The others are clustered on the
// measured bandwidths:
//
//  1. A measured pair is near when its peak is at least NearRatio times
//     the best peak each end reached with any other peer (a node with no
//     other peer does not object). Pairs on one switch run at the slower
//     node's link; pairs across switches share uplinks and run slower.
//  2. Components merge by majority linkage: near pairs are visited from
//     the fastest down, and the two components of a near pair merge when
//     at least half of all measured pairs between them are near. One
//     contended same-switch test does not split a switch, and one fast
//     test across an idle uplink does not join two switches that other
//     tests tell apart. Components of two different declared switches
//     never merge. Passes repeat until nothing merges.
//  3. A component holding declared nodes takes their switch; any other
//     takes InferredPrefix + its smallest member. A node left alone with
//     fewer than MinEvidence measured pairs is unknown (""): one test is
//     no evidence of a switch of its own.
//
// The result is deterministic: it depends on nodes, declared and ms, not
// on their order.
func Infer(nodes []string, declared map[string]string, ms []Measurement, cfg Config) Assignment {
	cfg = cfg.orDefault()
	names := slices.Clone(nodes)
	slices.Sort(names)
	names = slices.Compact(names)
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	all := merge(ms)
	var pairs []probeplan.Pair
	for _, p := range sortedPairs(all) {
		_, okA := idx[p.A]
		_, okB := idx[p.B]
		if okA && okB {
			pairs = append(pairs, p)
		}
	}

	// The two best peaks of each node, to know its best without a given peer.
	type best struct {
		peak [2]float64
		peer [2]int
	}
	top := make([]best, len(names))
	for i := range top {
		top[i].peer = [2]int{-1, -1}
	}
	evidence := make([]int, len(names))
	note := func(i, j int, w float64) {
		t := &top[i]
		evidence[i]++
		switch {
		case w > t.peak[0]:
			t.peak[1], t.peer[1] = t.peak[0], t.peer[0]
			t.peak[0], t.peer[0] = w, j
		case w > t.peak[1]:
			t.peak[1], t.peer[1] = w, j
		}
	}
	for _, p := range pairs {
		i, j, w := idx[p.A], idx[p.B], all[p].peak
		note(i, j, w)
		note(j, i, w)
	}
	without := func(i, j int) float64 {
		if top[i].peer[0] == j {
			return top[i].peak[1]
		}
		return top[i].peak[0]
	}
	type edge struct {
		i, j int
		w    float64
		near bool
	}
	edges := make([]edge, len(pairs))
	for k, p := range pairs {
		i, j, w := idx[p.A], idx[p.B], all[p].peak
		edges[k] = edge{i: i, j: j, w: w, near: w >= cfg.NearRatio*without(i, j) && w >= cfg.NearRatio*without(j, i)}
	}

	u := newUnion(len(names))
	for i, n := range names {
		u.decl[i] = declared[n]
	}
	firstOf := map[string]int{}
	for i, n := range names {
		if d := declared[n]; d != "" {
			if f, ok := firstOf[d]; ok {
				u.union(f, i)
			} else {
				firstOf[d] = i
			}
		}
	}
	for _, e := range edges {
		u.count(e.i, e.j, e.near)
	}
	near := make([]edge, 0, len(edges))
	for _, e := range edges {
		if e.near {
			near = append(near, e)
		}
	}
	slices.SortStableFunc(near, func(x, y edge) int { return cmp.Compare(y.w, x.w) })
	for changed := true; changed; {
		changed = false
		for _, e := range near {
			a, b := u.find(e.i), u.find(e.j)
			if a == b || (u.decl[a] != "" && u.decl[b] != "" && u.decl[a] != u.decl[b]) {
				continue
			}
			if c := u.between(a, b); c.near*2 >= c.total {
				u.union(a, b)
				changed = true
			}
		}
	}

	// Name the components.
	members := map[int][]int{}
	for i := range names {
		r := u.find(i)
		members[r] = append(members[r], i) // names are sorted: members[r][0] is the smallest
	}
	out := make(Assignment, len(names))
	for r, ms := range members {
		name := u.decl[r]
		if name == "" && (len(ms) > 1 || evidence[ms[0]] >= cfg.MinEvidence) {
			name = InferredPrefix + names[ms[0]]
		}
		for _, i := range ms {
			n := names[i]
			if d := declared[n]; d != "" {
				out[n] = Switch{Name: d}
				continue
			}
			out[n] = Switch{Name: name, Inferred: name != ""}
		}
	}
	return out
}

// counts are the measured and near pairs between two components.
type counts struct{ near, total int }

// union is a union-find over node indices that keeps, per component, its
// declared switch and the pair counts to every other component (merged
// small into large).
type union struct {
	parent []int
	size   []int
	decl   []string
	links  []map[int]*counts
}

func newUnion(n int) *union {
	u := &union{parent: make([]int, n), size: make([]int, n), decl: make([]string, n), links: make([]map[int]*counts, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = i, 1
	}
	return u
}

func (u *union) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

func (u *union) get(a, b int) *counts {
	if u.links[a] == nil {
		u.links[a] = map[int]*counts{}
	}
	c := u.links[a][b]
	if c == nil {
		c = &counts{}
		u.links[a][b] = c
	}
	return c
}

// count records a measured pair between the components of i and j.
func (u *union) count(i, j int, near bool) {
	a, b := u.find(i), u.find(j)
	if a == b {
		return
	}
	for _, c := range []*counts{u.get(a, b), u.get(b, a)} {
		c.total++
		if near {
			c.near++
		}
	}
}

func (u *union) between(a, b int) counts {
	if c := u.links[a][b]; c != nil {
		return *c
	}
	return counts{}
}

func (u *union) union(i, j int) {
	a, b := u.find(i), u.find(j)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	// b joins a: move b's counts to a, and re-key everyone's counts to b.
	for x, c := range u.links[b] {
		delete(u.links[x], b)
		if x == a {
			continue
		}
		ac, xc := u.get(a, x), u.get(x, a)
		ac.near, ac.total = ac.near+c.near, ac.total+c.total
		xc.near, xc.total = ac.near, ac.total
	}
	u.links[b] = nil
	u.parent[b] = a
	u.size[a] += u.size[b]
	if u.decl[a] == "" {
		u.decl[a] = u.decl[b]
	}
}
