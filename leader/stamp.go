package leader

import (
	"cmp"
	"math"
	"slices"

	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/nodestate"
)

// A bandwidth test between two switches reads what the uplinks had free
// then: their capacity less the traffic that crossed the same way
// meanwhile. Placement subtracts the traffic crossing now from the
// uplink's capacity; taking the test's rate for that capacity counts a
// flow that was already crossing during the test twice (lab12: the tests
// of a 60 Mbit/s uplink under a 30 Mbit/s flow peaked at 51, and 51 - 30
// left 21 where a job gets 30). stampCarried adds the crossing traffic of the
// test's time back: what the path carried, rate plus crossing traffic,
// is the uplink's capacity as that test saw it (netmodel's Carried,
// placement's SwCap).
//
// The crossing traffic from switch A to switch B is bounded as placement
// bounds it now, min(sum of tx over A's nodes, sum of rx over B's nodes),
// from each node's traffic steps (Node.Traffic), and taken as the least
// of that bound over the stampWindowMs before the test ended (a test of a
// second or so and the 3 s sample that holds it): a flow that began or
// ended within the window counts as absent. Too little is safe, too much
// is not: placement never lets the stamp lift an uplink above its fastest
// test, so an understated stamp only falls back on that test. The nodes'
// own bandwidth tests are not in their traffic (probe.Tracker leaves them
// out). A test up to stampBackfillMs before a switch's history begins (a
// cold start: the first cycle's tests run as the nodes' first samples
// arrive) takes the history's first step; an older one is not stamped.
const (
	stampWindowMs   = 5000
	stampBackfillMs = 30_000
)

// stampCarried sets CarriedAB and CarriedBA of ms's cross-switch
// measurements (switches from asg) from the nodes' traffic histories.
func stampCarried(asg netmodel.Assignment, nodes []Node, ms []netmodel.Measurement) {
	var sums map[string]trafficSteps
	for i := range ms {
		m := &ms[i]
		sa, sb := asg[m.A].Name, asg[m.B].Name
		if sa == "" || sb == "" || sa == sb || (m.OutAt == 0 && m.InAt == 0) {
			continue
		}
		if sums == nil {
			sums = switchSums(asg, nodes)
		}
		m.CarriedAB = carried(sums[sa], sums[sb], m.OutMbps, m.OutAt)
		m.CarriedBA = carried(sums[sb], sums[sa], m.InMbps, m.InAt)
	}
}

// carried is a test's rate from switch a to switch b plus the traffic
// that crossed a -> b while it ran (it ended at t); 0 when not known.
func carried(a, b trafficSteps, rate float64, t int64) float64 {
	if !(rate > 0) {
		return 0
	}
	x, ok := crossed(a, b, t)
	if !ok {
		return 0
	}
	return rate + x
}

// crossed is what could have gone from sender to receiver (a node or a
// switch each) while a test that ended at t ran, Mbit/s: the least over
// the stampWindowMs before t of min(sender's tx, receiver's rx), an upper
// bound of the traffic between them. ok is false when t is 0 or either
// history does not reach back to the window.
func crossed(sender, receiver trafficSteps, t int64) (mbps float64, ok bool) {
	tx, okS := sender.leastMbps(t, false)
	rx, okR := receiver.leastMbps(t, true)
	if !okS || !okR {
		return 0, false
	}
	return min(tx, rx), true
}

// leastMbps is the least of what the history received (or sent) over
// the stampWindowMs before t, in Mbit/s; false when t is 0 or the
// history does not reach back to the window.
func (s trafficSteps) leastMbps(t int64, received bool) (float64, bool) {
	if t == 0 {
		return 0, false
	}
	rx, tx, ok := s.least(t-stampWindowMs, t)
	if received {
		return rx * 8 / 1e6, ok
	}
	return tx * 8 / 1e6, ok
}

// trafficSteps is traffic as a step function, a node's (Node.Traffic) or
// a switch's summed over its nodes: at steps[k].At the rates became
// steps[k].Rx and .Tx (bytes/s), oldest first.
type trafficSteps []nodestate.TrafficPoint

// least is the least rx and tx over [lo, hi]: over the step in force at
// lo and every step that began up to hi. Before the first step, within
// stampBackfillMs of it, the first step stands in; false when lo is
// older than that, or there is no step.
func (s trafficSteps) least(lo, hi int64) (rx, tx float64, ok bool) {
	if len(s) == 0 || lo < s[0].At-stampBackfillMs {
		return 0, 0, false
	}
	i, found := slices.BinarySearchFunc(s, lo, func(p nodestate.TrafficPoint, t int64) int { return cmp.Compare(p.At, t) })
	if !found && i > 0 {
		i-- // the step in force at lo began before it
	}
	rx, tx = s[i].Rx, s[i].Tx
	for _, p := range s[i+1:] {
		if p.At > hi {
			break
		}
		rx, tx = min(rx, p.Rx), min(tx, p.Tx)
	}
	return rx, tx, true
}

// switchSums merges the traffic steps of each switch's nodes into the
// switch's sums: O(points log points) once per snapshot, with one event
// buffer and one table of the nodes' current steps for every switch.
// Before a node's first step its first step stands in: the nodes of a
// switch start sampling seconds apart, and a sum that counted the late
// ones as idle would read a cold start's flows as absent.
func switchSums(asg netmodel.Assignment, nodes []Node) map[string]trafficSteps {
	members := map[string][]int{}
	for i, n := range nodes {
		if sw := asg[n.Name].Name; sw != "" && len(n.Traffic) > 0 {
			members[sw] = append(members[sw], i)
		}
	}
	type ev struct {
		node int
		p    nodestate.TrafficPoint
	}
	var evs []ev
	cur := make([]nodestate.TrafficPoint, len(nodes)) // each node's step so far
	out := make(map[string]trafficSteps, len(members))
	for sw, idx := range members {
		evs = evs[:0]
		var rx, tx float64
		first := nodes[idx[0]].Traffic[0].At
		for _, i := range idx {
			pts := nodes[i].Traffic
			cur[i] = pts[0]
			rx, tx, first = rx+pts[0].Rx, tx+pts[0].Tx, min(first, pts[0].At)
			for _, p := range pts[1:] {
				evs = append(evs, ev{i, p})
			}
		}
		slices.SortStableFunc(evs, func(x, y ev) int { return cmp.Compare(x.p.At, y.p.At) })
		st := make(trafficSteps, 1, len(evs)+1)
		st[0] = nodestate.TrafficPoint{At: first, Rx: rx, Tx: tx}
		for k, e := range evs {
			old := cur[e.node]
			rx, tx = rx-old.Rx+e.p.Rx, tx-old.Tx+e.p.Tx
			cur[e.node] = e.p
			if k+1 < len(evs) && evs[k+1].p.At == e.p.At {
				continue // one step per instant
			}
			step := nodestate.TrafficPoint{At: e.p.At, Rx: max(0, rx), Tx: max(0, tx)}
			if last := &st[len(st)-1]; last.At == step.At {
				*last = step // a later node's step at the sums' very first instant
			} else {
				st = append(st, step)
			}
		}
		out[sw] = st
	}
	return out
}

// nodeTraffic indexes the nodes' traffic histories by name (nil: none).
// The steps are the nodes' own, not copies.
func nodeTraffic(nodes []Node) map[string]trafficSteps {
	var out map[string]trafficSteps
	for _, n := range nodes {
		if len(n.Traffic) == 0 {
			continue
		}
		if out == nil {
			out = make(map[string]trafficSteps, len(nodes))
		}
		out[n.Name] = n.Traffic
	}
	return out
}

// sameTestMs bounds how far apart the two ends of one bandwidth test
// stamp it: the client when its probe reports, after both halves; the
// server when the forward half ended. A half lasts at most the test
// timeout, and two machines' clocks differ; with the same reading, two
// rows' cells within it are the same test.
const sameTestMs = 30_000

// testEnds is what the leader knows of the ends of the nodes' direct
// bandwidth tests: each node's row, by peer, and its traffic history.
type testEnds struct {
	hist map[string]trafficSteps
	rows map[string][]nodestate.NetEntry
}

// nodeRows indexes the nodes' rows by name, each sorted by peer (agents
// send them sorted; a row that is not is sorted in a copy).
func nodeRows(nodes []Node) map[string][]nodestate.NetEntry {
	out := make(map[string][]nodestate.NetEntry, len(nodes))
	byPeer := func(a, b nodestate.NetEntry) int { return cmp.Compare(a.Peer, b.Peer) }
	for _, n := range nodes {
		row := n.Net
		if !slices.IsSortedFunc(row, byPeer) {
			row = slices.Clone(row)
			slices.SortFunc(row, byPeer)
		}
		out[n.Name] = row
	}
	return out
}

// cell is owner's cell for peer, nil when its row has none.
func (e testEnds) cell(owner, peer string) *nodestate.NetEntry {
	row := e.rows[owner]
	i, ok := slices.BinarySearchFunc(row, peer, func(c nodestate.NetEntry, p string) int { return cmp.Compare(c.Peer, p) })
	if !ok {
		return nil
	}
	return &row[i]
}

// addBack is the rate of one direction of owner's cell ne (out: owner
// to ne.Peer, else back) plus what both its ends carried besides the
// test while it ran, at most that direction's fastest test.
//
// A direct test between two nodes competed with what their own links
// carried then: a job's traffic at its ends lowers the reading, and
// placement reads the latest reading for a whole cycle (minutes) after the
// job has gone. Placement already takes each end's traffic now off the
// end's capacity (direction.go), so the traffic moves from the stale
// reading to the current terms.
//
// What an end carried besides the test is its own count of that very
// test where it has one (probe.BandwidthResult.Carried: its interface
// counters read around the half, the cells' CarriedOutMbps and CarriedInMbps; the peer's
// cell counts when it records the same reading within sameTestMs).
// Else it is the least of the end's traffic history over the
// stampWindowMs before the test ended, which a job shorter
// than a sample barely moves: a testbed run read a healthy
// 100 Mbit/s pair at 44 during a 1-s cold-start job, and that history
// gave nothing back.
//
// Both ends, not either: which link held the test back is not known,
// and traffic at one end only proves nothing about the path. After
// degrade10's link dropped to 10 Mbit/s, a test towards it read 10 while
// the sender carried 90 Mbit/s of a job elsewhere, and taking the busier
// end (max) would give it back 100. A test on quiet ends
// keeps its reading, so a degraded link shows at once; the node's own
// tests are not in its traffic history, and its counts leave its test out.
func (e testEnds) addBack(owner string, ne *nodestate.NetEntry, out bool) float64 {
	rate, peak, at, ownCar := ne.InMbps, ne.PeakInMbps, ne.InAt, ne.CarriedInMbps
	if out {
		rate, peak, at, ownCar = ne.OutMbps, ne.PeakOutMbps, ne.OutAt, ne.CarriedOutMbps
	}
	if !(peak > rate) {
		return rate
	}
	peerCar := 0.0 // the peer's count of the same test, the other way round in its row
	if pc := e.cell(ne.Peer, owner); pc != nil {
		prate, pat, pcar := pc.OutMbps, pc.OutAt, pc.CarriedOutMbps
		if out {
			prate, pat, pcar = pc.InMbps, pc.InAt, pc.CarriedInMbps
		}
		if math.Abs(prate-rate) <= 0.05 && abs64(pat-at) <= sameTestMs {
			peerCar = pcar
		}
	}
	sender, receiver, sendCar, recvCar := owner, ne.Peer, ownCar, peerCar
	if !out {
		sender, receiver, sendCar, recvCar = ne.Peer, owner, peerCar, ownCar
	}
	sent, okS := e.besides(sender, sendCar, rate, at, false)
	recv, okR := e.besides(receiver, recvCar, rate, at, true)
	if !okS || !okR {
		return rate
	}
	return min(peak, rate+min(sent, recv))
}

// besides is what node moved one way (received, or sent) besides a
// test of rate that ended at t, Mbit/s: from its own count of the test
// (carried, 0: none), else the least of its traffic history over the
// stampWindowMs before t; false when neither is known.
func (e testEnds) besides(node string, carried, rate float64, t int64, received bool) (float64, bool) {
	if carried > 0 {
		return max(0, carried-rate), true
	}
	return e.hist[node].leastMbps(t, received)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
