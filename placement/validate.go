package placement

import (
	"fmt"
	"math"

	"github.com/shoal-hpc/shoal/nodestate"
)

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
	if s.Model != nil {
		if err := checkModel(&s); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// validateLinks checks the snapshot's links.
func validateLinks(links []Link) error {
	for i := range links {
		l := &links[i]
		if !(finiteNonNeg(l.RTTus) && finiteNonNeg(l.AvailMbps) && finiteNonNeg(l.PeakMbps) &&
			finiteNonNeg32(l.OutMbps) && finiteNonNeg32(l.InMbps) && finiteNonNeg32(l.PeakOutMbps) && finiteNonNeg32(l.PeakInMbps)) {
			return linkError(i, l)
		}
	}
	return nil
}

// checkModel checks a Snapshot.Model: its tables fit n nodes (no index
// out of range), and every link it derives has finite, non-negative
// figures; the first that does not is reported as link links+k, k its
// place among the derived links, as if they followed the snapshot's links.
func checkModel(s *Snapshot) error {
	m, n := s.Model, len(s.Nodes)
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w: network model: %s", ErrInvalidSnapshot, fmt.Sprintf(why, args...))
	}
	if len(m.Sw) != n || len(m.Known) != n || len(m.Avail) != n || len(m.Peak) != n || len(m.Direct) != n {
		return bad("tables for %d, %d, %d, %d, %d nodes, want %d", len(m.Sw), len(m.Known), len(m.Avail), len(m.Peak), len(m.Direct), n)
	}
	if q := m.NS * m.NS; m.NS < 0 || len(m.SwOK) != q || len(m.SwAvail) != q || len(m.SwPeak) != q || len(m.SwRTTus) != q {
		return bad("switch-pair tables of %d, %d, %d, %d entries for %d switches", len(m.SwOK), len(m.SwAvail), len(m.SwPeak), len(m.SwRTTus), m.NS)
	}
	if m.SwCap != nil && len(m.SwCap) != m.NS*m.NS {
		return bad("uplink capacity table of %d entries for %d switches", len(m.SwCap), m.NS)
	}
	for k, c := range m.SwCap {
		if !finiteNonNeg(c) {
			return bad("uplink capacity %v for switch pair %d->%d, want a finite rate >= 0", c, k/m.NS, k%m.NS)
		}
	}
	valid := true
	for i := range n {
		if sw := m.Sw[i]; sw >= int32(m.NS) || sw < -1 {
			return bad("node %d on switch %d of %d", i, sw, m.NS)
		}
		valid = valid && finiteNonNeg(m.Avail[i]) && finiteNonNeg(m.Peak[i])
		for _, d := range m.Direct[i] {
			if d.J <= int32(i) || int(d.J) >= n {
				return bad("direct pair (%d, %d) of %d nodes", i, d.J, n)
			}
			valid = valid && !math.IsNaN(d.RTTus) && !math.IsInf(d.RTTus, 0)
		}
	}
	for k := range m.SwOK {
		valid = valid && finiteNonNeg(m.SwAvail[k]) && finiteNonNeg(m.SwPeak[k]) && finiteNonNeg(m.SwRTTus[k])
	}
	if valid {
		return nil // then every derived figure is a min of valid ones, or a direct RTT > 0
	}
	// Some entry is bad: find the first derived link it makes bad, if any.
	var err error
	k := len(s.Links)
	m.Each(n, func(i, j int, rtt, avail, peak float64) {
		if err == nil && !(finiteNonNeg(rtt) && finiteNonNeg(avail) && finiteNonNeg(peak)) {
			err = linkError(k, &Link{From: s.Nodes[i].Name, To: s.Nodes[j].Name, RTTus: rtt, AvailMbps: avail, PeakMbps: peak, Measured: true, Derived: true})
		}
		k++
	})
	return err
}

// linkError says which figure of link i is wrong.
func linkError(i int, l *Link) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"rtt_us", l.RTTus}, {"avail_mbps", l.AvailMbps}, {"peak_mbps", l.PeakMbps}, {"out_mbps", float64(l.OutMbps)},
		{"in_mbps", float64(l.InMbps)}, {"peak_out_mbps", float64(l.PeakOutMbps)}, {"peak_in_mbps", float64(l.PeakInMbps)}} {
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
	if !finiteNonNeg(n.NetRxBytesPerSec) || !finiteNonNeg(n.NetTxBytesPerSec) {
		return fmt.Errorf("net rx, tx = %v, %v, want finite and >= 0", n.NetRxBytesPerSec, n.NetTxBytesPerSec)
	}
	for _, m := range []struct {
		name string
		v    nodestate.Means
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
