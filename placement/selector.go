package placement

// selector is one placement policy. group answers a capacity request (enough
// slots for p.n processes) with an ordered group and its process counts; groupK
// answers a node-count request (GERBIL's loc and loc+dist modes) with k nodes.
type selector interface {
	group(p *problem) (nodes, procs []int, cands int)
	groupK(p *problem, k int) []int
}

func selectorFor(policy string, seed int64) selector {
	switch policy {
	case PolicyPaper:
		return paperPolicy{}
	case PolicyRandom:
		return randomPolicy{seed: seed}
	case PolicySequential:
		return sequentialPolicy{seed: seed}
	case PolicyLoad:
		return loadPolicy{}
	case policyOracle:
		return oraclePolicy{}
	default:
		return netloadPolicy{}
	}
}

// takeUntil returns the prefix of order whose slots first reach n (all of order
// when they never do), skipping nodes without slots unless none has any.
func takeUntil(order []int, slots []int, n int) []int {
	var g []int
	got := 0
	for _, i := range order {
		if got >= n {
			break
		}
		if slots[i] == 0 {
			continue
		}
		g = append(g, i)
		got += slots[i]
	}
	if len(g) == 0 {
		return order
	}
	return g
}

// takeK returns the first k nodes of order, preferring nodes with slots.
func takeK(order []int, slots []int, k int) []int {
	g := make([]int, 0, k)
	for _, i := range order {
		if len(g) < k && slots[i] > 0 {
			g = append(g, i)
		}
	}
	for _, i := range order {
		if len(g) < k && slots[i] == 0 {
			g = append(g, i)
		}
	}
	return g
}
