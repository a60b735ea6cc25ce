package placement

import (
	"fmt"
	"slices"
	"strings"
)

// Place computes a placement for r on snapshot s. It returns an error only for
// invalid input (NaN or negative attributes, an unknown hostfile host, n <= 0,
// ...); a cluster that cannot take the job now is a Decision with Wait set.
func Place(s Snapshot, r Request) (Decision, error) {
	if strings.EqualFold(strings.TrimSpace(r.Policy), policyOracle) {
		return Decision{}, fmt.Errorf("%w: policy %q is internal; call Oracle", ErrInvalidRequest, r.Policy)
	}
	return place(s, r, nil)
}

// Oracle answers r exhaustively: the group with the least T among all groups
// with enough slots (for loc and loc+dist: of the hostfile's node count). It is
// the yardstick of the heuristics and refuses more than OracleMaxNodes
// candidate nodes.
func Oracle(s Snapshot, r Request) (Decision, error) {
	r.Policy = policyOracle
	return place(s, r, nil)
}

// place runs the pipeline; sel overrides the request's policy (ablation tests).
func place(s Snapshot, r Request, sel selector) (Decision, error) {
	req, err := r.normalized()
	if err != nil {
		return Decision{}, err
	}
	snapIdx, err := validateSnapshot(s)
	if err != nil {
		return Decision{}, err
	}
	hf, err := mergeHostfile(req.Hostfile, snapIdx)
	if err != nil {
		return Decision{}, err
	}
	if (req.Relax == RelaxNone || req.Relax == RelaxLoc) && r.N != 0 && r.N != sumHosts(hf) {
		return Decision{}, fmt.Errorf("%w: n = %d but relax %q keeps the hostfile's %d processes",
			ErrInvalidRequest, r.N, req.Relax, sumHosts(hf))
	}
	p := newProblem(&s, req, snapIdx)
	// The decision keeps nothing of the pair tables.
	defer p.net.release()
	defer p.paperNL.release()
	d := Decision{Score: Breakdown{Policy: req.Policy, Relax: req.Relax, Alpha: req.Alpha, Beta: 1 - req.Alpha}}
	if len(p.nodes) == 0 {
		return wait(d, p.noNodesReason()), nil
	}
	if req.Policy == policyOracle && len(p.nodes) > OracleMaxNodes {
		return Decision{}, fmt.Errorf("%w: %d eligible nodes, at most %d", ErrTooLarge, len(p.nodes), OracleMaxNodes)
	}

	// The nodes the decision may use: fixed by the hostfile when location is kept.
	cands := eligibleAll(p)
	fixed := req.Relax == RelaxNone || req.Relax == RelaxDist
	if fixed {
		if cands, err = p.hostfileNodes(hf); err != nil {
			return Decision{}, err
		}
	}
	if reason, over := p.overloaded(cands); over && !req.Force {
		return wait(d, reason), nil
	}
	slots := p.slots
	if req.Policy == PolicyPaper {
		slots = p.paperPC
	}
	if req.Relax == RelaxAll && !req.Oversubscribe {
		if free := sumOver(cands, slots); free < req.N {
			return wait(d, fmt.Sprintf("not enough free slots: need %d, the %d usable nodes have %d (oversubscription off)",
				req.N, len(cands), free)), nil
		}
	}

	if sel == nil {
		sel = selectorFor(req.Policy, req.Seed)
	}
	var g, procs []int
	switch req.Relax {
	case RelaxAll:
		g, procs, d.Score.Candidates = sel.group(p)
	case RelaxNone:
		g = cands
		for _, h := range hf {
			procs = append(procs, h.Slots)
		}
	case RelaxDist:
		g = cands
		procs = roundRobin(p.work, g, slots, req.N)
	case RelaxLoc:
		g = sel.groupK(p, min(len(hf), len(p.nodes)))
		procs = matchCounts(g, slots, hf)
	case RelaxLocDist:
		g = sel.groupK(p, min(len(hf), len(p.nodes)))
		procs = roundRobin(p.work, g, slots, req.N)
	}
	if req.Relax == RelaxLoc || req.Relax == RelaxLocDist {
		d.Score.Candidates = 1
	}

	if err := p.work.err(); err != nil {
		return Decision{}, fmt.Errorf("place %d processes: %w", req.N, err)
	}
	g, procs = dropEmpty(g, procs)
	if !fixed && ordersRanks(req.Policy) {
		g, procs = p.rankOrder(g, procs)
	}
	if reason, over := oversubscribed(p, g, procs, slots); over {
		if !req.Oversubscribe {
			return wait(d, reason+" (oversubscription off)"), nil
		}
		d.Degraded, d.DegradedReason = true, reason
	}
	for x, i := range g {
		d.Hosts = append(d.Hosts, Host{Node: p.nodes[i].Name, NP: procs[x]})
	}
	p.explain(&d.Score, g, procs, slots)
	return d, nil
}

// ordersRanks tells the policies whose groups are listed in rank order
// (rankOrder): those that read the network. random and load ignore it by
// design, as yardsticks of what ignoring it costs, so their order stays
// theirs (random's the seeded shuffle, in which nodes and order are both
// chance); sequential's order is already switch by switch. A hostfile
// whose hosts are kept (relax none or dist) keeps the user's order.
func ordersRanks(policy string) bool {
	return policy == PolicyNetload || policy == PolicyPaper || policy == policyOracle
}

func wait(d Decision, reason string) Decision {
	d.Wait, d.WaitReason, d.Hosts = true, reason, nil
	return d
}

func (p *problem) noNodesReason() string {
	var why []string
	if p.dead > 0 {
		why = append(why, fmt.Sprintf("%d dead", p.dead))
	}
	if p.noCores > 0 {
		why = append(why, fmt.Sprintf("%d without reported cores", p.noCores))
	}
	if p.noPE > 0 {
		why = append(why, fmt.Sprintf("%d without %s", p.noPE, p.missingPE))
	}
	if len(why) == 0 {
		return "no nodes in the snapshot"
	}
	return "no usable node: " + strings.Join(why, ", ")
}

// overloaded is seed 002 §6: when every candidate is above the load threshold,
// placing now only time-shares busy cores, so recommend waiting.
func (p *problem) overloaded(cands []int) (string, bool) {
	low, at := -1.0, ""
	for _, i := range cands {
		l := loadPerCore(p.nodes[i])
		if l <= p.req.LoadThreshold {
			return "", false
		}
		if low < 0 || l < low {
			low, at = l, p.nodes[i].Name
		}
	}
	return fmt.Sprintf("cluster overloaded: all %d candidate nodes are above %.2f load per core (least: %s at %.2f); wait or force",
		len(cands), p.req.LoadThreshold, at, low), true
}

func oversubscribed(p *problem, g, procs, slots []int) (string, bool) {
	extra, nodes := 0, 0
	var names []string
	for x, i := range g {
		if e := procs[x] - slots[i]; e > 0 {
			extra += e
			nodes++
			if len(names) < 3 {
				names = append(names, fmt.Sprintf("%s +%d", p.nodes[i].Name, e))
			}
		}
	}
	if extra == 0 {
		return "", false
	}
	more := ""
	if nodes > len(names) {
		more = ", ..."
	}
	return fmt.Sprintf("oversubscribed: %d processes beyond free slots on %d nodes (%s%s)",
		extra, nodes, strings.Join(names, ", "), more), true
}

func dropEmpty(g, procs []int) ([]int, []int) {
	var og, op []int
	for x := range g {
		if procs[x] > 0 {
			og, op = append(og, g[x]), append(op, procs[x])
		}
	}
	return og, op
}

// matchCounts keeps the hostfile's distribution on relaxed locations: the
// largest count goes to the node with the most free slots.
func matchCounts(g, slots []int, hf []HostSlots) []int {
	counts := make([]int, len(hf))
	for x, h := range hf {
		counts[x] = h.Slots
	}
	slices.SortStableFunc(counts, func(a, b int) int { return b - a })
	pos := make([]int, len(g))
	for x := range pos {
		pos[x] = x
	}
	slices.SortStableFunc(pos, func(a, b int) int { return slots[g[b]] - slots[g[a]] })
	procs := make([]int, len(g))
	if len(g) == 0 {
		return procs
	}
	// More hostfile lines than usable nodes: the extra lines wrap around.
	for x, c := range counts {
		procs[pos[x%len(pos)]] += c
	}
	return procs
}
