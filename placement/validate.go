package placement

import "fmt"

// validateSnapshot rejects what no placement can be computed from: duplicate or
// empty names and NaN, infinite or negative attributes. Dead nodes are checked too,
// because a NaN anywhere means the producer is broken.
func validateSnapshot(s Snapshot) (map[string]int, error) {
	idx := make(map[string]int, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Name == "" {
			return nil, fmt.Errorf("%w: node %d has no name", ErrInvalidSnapshot, i)
		}
		if _, dup := idx[n.Name]; dup {
			return nil, fmt.Errorf("%w: node %q listed twice", ErrInvalidSnapshot, n.Name)
		}
		idx[n.Name] = i
		if err := validateNode(n); err != nil {
			return nil, fmt.Errorf("%w: node %q: %w", ErrInvalidSnapshot, n.Name, err)
		}
	}
	if err := validateLinks(s.Links); err != nil {
		return nil, err
	}
	for k := range s.Pairs {
		pr := &s.Pairs[k]
		if pr.A < 0 || int(pr.A) >= len(s.Nodes) || pr.B < 0 || int(pr.B) >= len(s.Nodes) {
			return nil, fmt.Errorf("%w: link %d: pair (%d, %d) of %d nodes", ErrInvalidSnapshot, len(s.Links)+k, pr.A, pr.B, len(s.Nodes))
		}
		if !finiteNonNeg(pr.RTTms) || !finiteNonNeg(pr.AvailMbps) || !finiteNonNeg(pr.PeakMbps) {
			l := pr.Link(&s)
			return nil, linkError(len(s.Links)+k, &l)
		}
	}
	return idx, nil
}

// validateLinks checks the snapshot's links.
func validateLinks(links []Link) error {
	for i := range links {
		l := &links[i]
		if !(finiteNonNeg(l.RTTms) && finiteNonNeg(l.AvailMbps) && finiteNonNeg(l.PeakMbps) &&
			finiteNonNeg32(l.FwdMbps) && finiteNonNeg32(l.RevMbps) && finiteNonNeg32(l.FwdPeakMbps) && finiteNonNeg32(l.RevPeakMbps)) {
			return linkError(i, l)
		}
	}
	return nil
}

// linkError says which figure of link i is wrong.
func linkError(i int, l *Link) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"rtt_ms", l.RTTms}, {"avail_mbps", l.AvailMbps}, {"peak_mbps", l.PeakMbps}, {"fwd_mbps", float64(l.FwdMbps)},
		{"rev_mbps", float64(l.RevMbps)}, {"fwd_peak_mbps", float64(l.FwdPeakMbps)}, {"rev_peak_mbps", float64(l.RevPeakMbps)}} {
		if !finiteNonNeg(f.v) {
			return fmt.Errorf("%w: link %d (%s -> %s): %s = %v, want finite and >= 0",
				ErrInvalidSnapshot, i, l.From, l.To, f.name, f.v)
		}
	}
	return nil
}

func validateNode(n *Node) error {
	if n.Cores < 0 || n.Threads < 0 || n.Users < 0 || n.HeldSlots < 0 {
		return fmt.Errorf("negative count (cores %d, threads %d, users %d, held %d)", n.Cores, n.Threads, n.Users, n.HeldSlots)
	}
	if !finiteNonNeg(n.MHz) {
		return fmt.Errorf("mhz = %v, want finite and >= 0", n.MHz)
	}
	if !finiteNonNeg(n.NetRx) || !finiteNonNeg(n.NetTx) {
		return fmt.Errorf("net rx, tx = %v, %v, want finite and >= 0", n.NetRx, n.NetTx)
	}
	for _, m := range []struct {
		name string
		v    Means
	}{{"load", n.Load}, {"cpu_util", n.CPUUtil}, {"mem_avail", n.MemAvail}, {"net_flow", n.NetFlow}} {
		for _, v := range [...]float64{m.v.Now, m.v.M1, m.v.M5, m.v.M15} {
			if !finiteNonNeg(v) {
				return fmt.Errorf("%s = %v, want finite and >= 0", m.name, v)
			}
		}
	}
	for _, p := range n.PEs {
		if p.Count < 0 {
			return fmt.Errorf("pe %q count %d, want >= 0", p.Kind, p.Count)
		}
	}
	return nil
}
