package placement

import (
	"cmp"
	"math"
	"slices"
)

// problem is one request against one snapshot in the index space of the eligible
// nodes: alive, with reported cores and the PEs the job needs, sorted by name so
// that "lowest index" is the documented name tie-break everywhere.
type problem struct {
	req        Request
	snap       *Snapshot
	snapIdx    map[string]int
	elig       []int // snapshot index -> eligible index, -1 when not eligible
	nodes      []*Node
	cl         []float64 // CL for T: load, CPU and used memory as shares of the node's capacity (computeLoads)
	busy       float64   // the shares' part of sum(cl)
	busyWeight float64   // the attribute weights that went into shares
	paperCL    []float64 // Eq. 1 verbatim (paper policy only)
	slots      []int     // free slots: Eq. 3 without wrap-around, less held, PPN, PE cap
	room       []int     // slots before the clamp at 0: negative when held slots exceed the free cores (spill)
	paperPC    []int     // the same from Eq. 3 verbatim
	net        *network  // NL of T (netload, oracle): the RTT in its unit (network's comment), the transfer cost against the fastest peak
	paperNL    *network  // NL with each pair's own peak, Eq. 2 verbatim (paper policy only)
	n          int

	// T's references: the expected C and N of an average group of the size
	// the request needs, so T of a random group is about 1.
	cref, nref float64
	kref       int     // nodes an average group of the needed size has
	a, b       float64 // alpha/cref, beta/nref: T = a*C + b*N
	paperT     float64 // Eq. 4 of the paper policy's winner

	work *budget // bounds the request-dependent loops (Request.Done, MaxSteps)

	// considered are groups (eligible indices) the policy compared, for
	// the breakdown; they play no part in the decision.
	considered [][]int

	dead, noCores, noPE int
	missingPE           string
}

func newProblem(s *Snapshot, r Request, snapIdx map[string]int) *problem {
	p := &problem{req: r, snap: s, snapIdx: snapIdx, n: r.N, elig: make([]int, len(s.Nodes)), work: newBudget(&r)}
	order := make([]int, 0, len(s.Nodes))
	for i := range s.Nodes {
		p.elig[i] = -1
		nd := &s.Nodes[i]
		switch pe, ok := hasPEs(nd, r.PEs); {
		case !nd.Alive:
			p.dead++
		case nd.LogicalCores() == 0:
			p.noCores++ // not yet reported: nothing to place on
		case !ok:
			p.noPE++
			p.missingPE = pe
		default:
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(s.Nodes[x].Name, s.Nodes[y].Name) })
	p.nodes = make([]*Node, len(order))
	p.slots = make([]int, len(order))
	p.room = make([]int, len(order))
	p.paperPC = make([]int, len(order))
	groups := map[string]int32{}
	group := make([]int32, len(order))
	for e, i := range order {
		p.elig[i] = e
		nd := &s.Nodes[i]
		p.nodes[e] = nd
		p.slots[e] = slotsFor(nd, freePC(nd), &r)
		p.room[e] = roomFor(nd, &r)
		p.paperPC[e] = slotsFor(nd, paperPC(nd), &r)
		g, ok := groups[nd.Switch]
		if !ok {
			g = int32(len(groups))
			groups[nd.Switch] = g
		}
		group[e] = g
	}
	dense := len(order) <= denseMaxNodes
	// The oracle reads every pair's cost of its (small) node set many times.
	p.net = buildNetwork(s, snapIdx, p.elig, group, len(groups), r.WLT, r.WBW, true, dense, r.Policy == policyOracle)
	p.cl, p.busy, p.busyWeight = computeLoads(p.nodes, r.Attr, true, p.net.nodePeak)
	if r.Policy == PolicyPaper {
		p.paperNL = buildNetwork(s, snapIdx, p.elig, group, len(groups), r.WLT, r.WBW, false, dense, true)
		p.paperCL, _, _ = computeLoads(p.nodes, r.Attr, false, nil)
	}
	p.setReferences()
	return p
}

// busyFloorShare is the share of a node's cores, CPU and memory below which
// T's compute reference stops following the cluster's mean load. An
// eighth, measured on the testbed's perfect snapshots as a node's weight
// alpha*CL/C_ref in T, scored as TestCasesMargin scores a group
// (docs/design/placement.md, "the compute load as how busy a node is"): a nice-19 CPU hog on a 2-core node of
// lab12 weighs 0.22 (0.32 under Eq. 1), enough to keep it out of the best
// group, while degrade10's idle loads 0.10 and 0.02 are 0.009 apart (0.095
// under Eq. 1). A quarter let the hog's group win on lab12.
const busyFloorShare = 0.125

func (p *problem) setReferences() {
	v := len(p.nodes)
	if v == 0 {
		p.cref, p.nref, p.a, p.b = 1, 1, 0, 0
		return
	}
	sumCL, sumSlots := 0.0, 0
	for i := range p.nodes {
		sumCL += p.cl[i]
		sumSlots += p.slots[i]
	}
	k := v
	if sumSlots > 0 {
		k = int(math.Ceil(float64(p.n) * float64(v) / float64(sumSlots)))
	}
	k = min(max(k, 1), v)
	p.kref = k
	// The busy part at least a cluster's whose nodes are an eighth busy:
	// on a quiet cluster its mean is the idle nodes' noise, and T against
	// it would weigh 0.01 of a core against 0.03 like an idle node against
	// a busy one. The attributes that keep Eq. 1's relative
	// figure (what the nodes have; users; flow or memory without the
	// figures for shares) keep their mean.
	floor := busyFloorShare * p.busyWeight / float64(v)
	p.cref = float64(k) * ((sumCL-p.busy)/float64(v) + max(p.busy/float64(v), floor))
	// The median pair, not the mean: one node on a slow link (a degraded
	// port, whose every pair costs up to 9) lifts the mean until every
	// other group's N looks alike next to the compute term; the median
	// keeps N/nref about 1 for an average group of the pairs that are.
	p.nref = float64(max(1, k*(k-1)/2)) * p.net.medianCost
	if p.cref <= 0 {
		p.cref = 1
	}
	if p.nref <= 0 {
		p.nref = 1
	}
	p.a = p.req.Alpha / p.cref
	p.b = (1 - p.req.Alpha) / p.nref
}

// costs returns C (sum of CL) and N (sum of NL over pairs) of a group.
func (p *problem) costs(g []int) (c, n float64) { return costsOn(p.net, p.cl, g) }

func costsOn(net *network, cl []float64, g []int) (c, n float64) {
	for x, i := range g {
		c += cl[i]
		for _, j := range g[x+1:] {
			n += net.cost(i, j)
		}
	}
	return c, n
}

// usable lists the eligible nodes with at least one slot, or every eligible node
// when none has one (then everything is oversubscribed anyway).
func usable(slots []int) []int {
	var u []int
	for i, s := range slots {
		if s > 0 {
			u = append(u, i)
		}
	}
	if len(u) == 0 {
		u = make([]int, len(slots))
		for i := range u {
			u[i] = i
		}
	}
	return u
}
