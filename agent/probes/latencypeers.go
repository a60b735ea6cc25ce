package probes

import (
	"cmp"
	"slices"

	"github.com/shoal-hpc/shoal/agent/probes/child"
)

// DefaultLatencyPeers is how many peers the latency probe pings when
// Config.LatencyPeers is 0.
const DefaultLatencyPeers = 16

// uncertainCoordError is the Vivaldi error estimate above which a peer's
// coordinate is not trusted for the RTT and it is pinged directly. serf
// starts a coordinate at 1.5 and a settled one sits well below 0.5.
const uncertainCoordError = 0.5

// latencyCandidate is a live peer as the latency probe's choice sees it.
type latencyCandidate struct {
	child.Peer
	// Switch is the peer's declared or inferred switch, "" when unknown.
	Switch string
	// Coord is false when the peer gossips no coordinate; CoordErr is its
	// error estimate.
	Coord    bool
	CoordErr float64
}

// chooseLatencyPeers picks at most limit peers for this node's latency
// probe: Vivaldi coordinates give every other pair's
// RTT, so direct pings go where they tell most. In order:
//
//  1. peers on this node's switch, nearest on the sorted ring first
//     (placement's same-switch RTTs, which coordinates on a
//     sub-millisecond LAN do not resolve);
//  2. peers whose coordinate is missing or uncertain (error above
//     uncertainCoordError), nearest on the ring first;
//  3. the rest, ring successors first, so each node pings a few other
//     switches and every switch pair gets some direct samples.
//
// With no more candidates than limit every one is pinged, as before.
// The result is sorted by name, so an unchanged choice is not re-sent.
func chooseLatencyPeers(self, selfSwitch string, cands []latencyCandidate, limit int) []child.Peer {
	if limit <= 0 {
		limit = DefaultLatencyPeers
	}
	out := make([]child.Peer, 0, min(limit, len(cands)))
	if len(cands) <= limit {
		for _, c := range cands {
			out = append(out, c.Peer)
		}
		slices.SortFunc(out, func(a, b child.Peer) int { return compareNames(a.Name, b.Name) })
		return out
	}
	ring := slices.Clone(cands)
	slices.SortFunc(ring, func(a, b latencyCandidate) int { return compareNames(a.Name, b.Name) })
	// Start the ring after self, so nodes spread their pings.
	start, _ := slices.BinarySearchFunc(ring, self, func(c latencyCandidate, s string) int { return compareNames(c.Name, s) })
	order := make([]latencyCandidate, 0, len(ring))
	// Nearest first: alternate successors and predecessors (on a small
	// ring a peer comes twice; taken skips it).
	for d := 0; len(order) < len(ring); d++ {
		order = append(order, ring[(start+d)%len(ring)])
		if len(order) < len(ring) {
			order = append(order, ring[((start-1-d)%len(ring)+len(ring))%len(ring)])
		}
	}
	taken := map[string]bool{}
	take := func(keep func(latencyCandidate) bool) {
		for _, c := range order {
			if len(out) >= limit {
				return
			}
			if !taken[c.Name] && keep(c) {
				taken[c.Name] = true
				out = append(out, c.Peer)
			}
		}
	}
	take(func(c latencyCandidate) bool { return selfSwitch != "" && c.Switch == selfSwitch })
	take(func(c latencyCandidate) bool { return !c.Coord || c.CoordErr > uncertainCoordError })
	take(func(latencyCandidate) bool { return true })
	slices.SortFunc(out, func(a, b child.Peer) int { return compareNames(a.Name, b.Name) })
	return out
}

func compareNames(a, b string) int { return cmp.Compare(a, b) }
