package leader

import (
	"maps"
	"slices"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
)

// linkDue is what linkRetests found: the pairs to test again because a
// member's link changed since their latest tests.
type linkDue struct {
	// Pairs are the pairs to test again, the changed members' pairs
	// together, members in name order.
	Pairs []probeplan.Pair
	// Change is, per pair of Pairs, the change it is due for (Unix ms):
	// the later of its ends' changes.
	Change map[probeplan.Pair]int64
	// Nodes are the changed members Pairs hold, sorted: for the log.
	Nodes []string
	// New holds, per member whose verdict (Node.Link) gives a change
	// later than the book's (ProbesBook.LinkBooked), that change.
	New map[string]int64
}

// linkRetests lists the pairs to test again because a member's link
// checks say its link changed (Node.Link) since the pair's latest test:
// every pair of that member with another member whose latest test is
// older than the change (Link.Since).
//
// Within the cycle under way (again false) only a change the book has
// not seen yet lists pairs: its pairs are booked once there, each booking
// moving two tests of a full round back. Between cycles (again true) the
// changes the book remembers list their pairs too, whether or not the
// verdict still stands: a re-test that failed (its peer busy as the
// duties started, a timeout) leaves its pair at the figure from before
// the change, and the verdict may end before every pair was tested again
// (the link is back, or its slow checks left the window). Such a pair is
// listed up to probeplan.RetestTries times per change
// (ProbesBook.LinkTries), and not before its last booking's Next: the
// round after the one that tested it, so that its row has reached the
// leader and a busy peer has had a round to finish.
//
// All the node's pairs, not the checked ones only: the check tells this
// node's link from one peer's (probeplan.LinkCheckConfig.Confirm), and
// the node's link bounds every pair through it. Which pairs run when is
// the planners' (probeplan.RetestsInCycle within the cycle under way,
// PlanTopoCatchUp after it), under the budget's cap.
func linkRetests(nodes []Node, members []string, last map[probeplan.Pair]time.Time, b ProbesBook, now time.Time, again bool) linkDue {
	live := make(map[string]bool, len(members))
	for _, m := range members {
		live[m] = true
	}
	var d linkDue
	known := map[string]int64{} // per member, its latest change
	for _, n := range nodes {
		if !live[n.Name] {
			continue
		}
		c := b.LinkBooked[n.Name]
		if l := n.Link; l.Change != "" && !l.Since.IsZero() && l.Since.UnixMilli() > c {
			c = l.Since.UnixMilli()
			if d.New == nil {
				d.New = map[string]int64{}
			}
			d.New[n.Name] = c
		}
		if c > 0 {
			known[n.Name] = c
		}
	}
	from := d.New
	if again {
		from = known
	}
	if len(from) == 0 {
		return d
	}
	sorted := slices.Sorted(slices.Values(members))
	seen := map[probeplan.Pair]bool{}
	for _, n := range slices.Sorted(maps.Keys(from)) {
		for _, m := range sorted {
			q := probeplan.NewPair(n, m)
			if m == n || seen[q] {
				continue
			}
			seen[q] = true
			c := max(known[n], known[m])
			if !last[q].Before(time.UnixMilli(c)) {
				continue
			}
			if t := b.LinkTries[q]; t.Change == c && (t.Tries >= probeplan.RetestTries || now.UnixMilli() < t.Next) {
				continue
			}
			if d.Change == nil {
				d.Change = map[probeplan.Pair]int64{}
			}
			d.Pairs = append(d.Pairs, q)
			d.Change[q] = c
			if len(d.Nodes) == 0 || d.Nodes[len(d.Nodes)-1] != n {
				d.Nodes = append(d.Nodes, n)
			}
		}
	}
	return d
}

// bookLinks records in a copy of the book the changes d found new
// (LinkBooked), whatever was planned: the book remembers a change after
// the verdict that gave it ends. For each pair of d that rounds (duties
// from start, a round every rl) test, it counts a try for its change and
// holds the next one back until a round after the round that tests it
// (LinkTries); a pair tested since its change is forgotten (last).
func (b ProbesBook) bookLinks(d linkDue, rounds [][]probeplan.Duty, start time.Time, rl time.Duration, last map[probeplan.Pair]time.Time) ProbesBook {
	if len(d.New) > 0 {
		booked := maps.Clone(b.LinkBooked)
		if booked == nil {
			booked = map[string]int64{}
		}
		maps.Copy(booked, d.New)
		b.LinkBooked = booked
	}
	if len(d.Change) == 0 {
		return b
	}
	tries := maps.Clone(b.LinkTries)
	if tries == nil {
		tries = map[probeplan.Pair]LinkTry{}
	}
	maps.DeleteFunc(tries, func(q probeplan.Pair, t LinkTry) bool { return !last[q].Before(time.UnixMilli(t.Change)) })
	for i, r := range rounds {
		for _, duty := range r {
			q := probeplan.NewPair(duty.From, duty.To)
			c, ok := d.Change[q]
			if !ok {
				continue
			}
			t := LinkTry{Change: c, Tries: 1}
			if prev := tries[q]; prev.Change == c {
				t.Tries = prev.Tries + 1
			}
			t.Next = start.Add(time.Duration(i+2) * rl).UnixMilli()
			tries[q] = t
		}
	}
	b.LinkTries = tries
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
		var net []nodestate.NetEntry
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
func capEntry(e nodestate.NetEntry, l probeplan.LinkVerdict) (nodestate.NetEntry, bool) {
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
	cap1(&e.OutMbps, &e.PeakOutMbps, e.OutAt)
	cap1(&e.InMbps, &e.PeakInMbps, e.InAt)
	if e.OutAt == 0 && e.InAt == 0 {
		cap1(&e.AvailMbps, &e.PeakMbps, e.BWAt) // a row without directions
		return e, changed
	}
	if !changed {
		return e, false
	}
	switch {
	case e.OutAt != 0 && e.InAt != 0:
		e.AvailMbps, e.PeakMbps = min(e.OutMbps, e.InMbps), max(e.PeakOutMbps, e.PeakInMbps)
	case e.OutAt != 0:
		e.AvailMbps, e.PeakMbps = e.OutMbps, e.PeakOutMbps
	default:
		e.AvailMbps, e.PeakMbps = e.InMbps, e.PeakInMbps
	}
	return e, true
}
