package leader

import (
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
)

// linkRetests lists the pairs to test again because a member's link
// checks say its link changed (Node.Link) since the pair's latest test:
// every pair of that member with another member whose latest test is
// older than the change was noticed (Link.Since), the member's pairs
// together, members in name order. A change the book already booked
// (booked: per node, the Since its pairs were booked for) lists nothing;
// since holds, per node listed, the Since to book.
//
// All the node's pairs, not the checked ones only: the check tells this
// node's link from one peer's (probeplan.LinkCheckConfig.Confirm), and
// the node's link bounds every pair through it. Which pairs run when is
// the planners' (probeplan.RetestsInCycle within the cycle under way,
// PlanTopoCatchUp after it), under the budget's cap.
func linkRetests(nodes []Node, members []string, last map[probeplan.Pair]time.Time, booked map[string]int64) ([]probeplan.Pair, map[string]int64) {
	live := make(map[string]bool, len(members))
	for _, m := range members {
		live[m] = true
	}
	var out []probeplan.Pair
	var since map[string]int64
	seen := map[probeplan.Pair]bool{}
	changed := slices.Clone(nodes)
	slices.SortFunc(changed, func(a, b Node) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	for _, n := range changed {
		l := n.Link
		if !live[n.Name] || l.Change == "" || l.Since.IsZero() || booked[n.Name] >= l.Since.UnixMilli() {
			continue
		}
		for _, m := range slices.Sorted(slices.Values(members)) {
			q := probeplan.NewPair(n.Name, m)
			if m == n.Name || seen[q] || !last[q].Before(l.Since) {
				continue
			}
			seen[q] = true
			out = append(out, q)
			if since == nil {
				since = map[string]int64{}
			}
			since[n.Name] = l.Since.UnixMilli()
		}
	}
	return out, since
}

// bookLinks records in a copy of the book's LinkBooked, for each node of
// since that one of planned involves, the change its pairs were booked
// for: the same change does not book them again (a row reaches the
// leader a little after its round ends, and a test that fails leaves the
// pair to the next cycle).
func (b ProbesBook) bookLinks(planned []probeplan.Pair, since map[string]int64) ProbesBook {
	if len(since) == 0 {
		return b
	}
	next := make(map[string]int64, len(b.LinkBooked)+len(since))
	for k, v := range b.LinkBooked {
		next[k] = v
	}
	for _, q := range planned {
		for _, n := range []string{q.A, q.B} {
			if s, ok := since[n]; ok {
				next[n] = s
			}
		}
	}
	b.LinkBooked = next
	return b
}

// capChangedLinks returns nodes with the rows' figures through a link
// whose checks read it slower (Node.Link) capped at what the checks
// read, for each direction tested before the change was noticed: until
// its pairs are tested again, placement does not take a link that
// dropped to a tenth at its old rate, nor prefer the node. A direction
// tested since keeps its reading. A faster link caps nothing: its pairs
// read low until tested again, which keeps placement off the node, the
// safe side. nodes itself is not changed.
func capChangedLinks(nodes []Node) []Node {
	slow := map[string]probeplan.LinkVerdict{}
	for _, n := range nodes {
		if n.Link.Change == probeplan.LinkSlower && n.Link.Mbps > 0 {
			slow[n.Name] = n.Link
		}
	}
	if len(slow) == 0 {
		return nodes
	}
	out := slices.Clone(nodes)
	for i := range out {
		own, ownSlow := slow[out[i].Name]
		var net []NetEntry
		for j, e := range out[i].Net {
			l, ok := slow[e.Peer]
			switch {
			case ownSlow && ok:
				l = slowerOf(own, l)
			case ownSlow:
				l, ok = own, true
			}
			if !ok {
				continue
			}
			c, changed := capEntry(e, l)
			if !changed {
				continue
			}
			if net == nil {
				net = slices.Clone(out[i].Net)
			}
			net[j] = c
		}
		if net != nil {
			out[i].Net = net
		}
	}
	return out
}

// slowerOf is the verdict with the lower reading.
func slowerOf(a, b probeplan.LinkVerdict) probeplan.LinkVerdict {
	if b.Mbps < a.Mbps {
		return b
	}
	return a
}

// capEntry caps e's directions tested before l.Since at l.Mbps, and its
// undirected figures as fillBW makes them (BW the worse direction's
// latest, Peak the faster's fastest).
func capEntry(e NetEntry, l probeplan.LinkVerdict) (NetEntry, bool) {
	since := l.Since.UnixMilli()
	changed := false
	cap1 := func(rate, peak *float64, at int64) {
		if at == 0 || at >= since {
			return
		}
		if *rate > l.Mbps || *peak > l.Mbps {
			*rate, *peak = min(*rate, l.Mbps), min(*peak, l.Mbps)
			changed = true
		}
	}
	cap1(&e.BWOut, &e.PeakOut, e.BWOutAt)
	cap1(&e.BWIn, &e.PeakIn, e.BWInAt)
	if e.BWOutAt == 0 && e.BWInAt == 0 {
		cap1(&e.BW, &e.Peak, e.BWAt) // a row without directions
		return e, changed
	}
	if !changed {
		return e, false
	}
	switch {
	case e.BWOutAt != 0 && e.BWInAt != 0:
		e.BW, e.Peak = min(e.BWOut, e.BWIn), max(e.PeakOut, e.PeakIn)
	case e.BWOutAt != 0:
		e.BW, e.Peak = e.BWOut, e.PeakOut
	default:
		e.BW, e.Peak = e.BWIn, e.PeakIn
	}
	return e, true
}
