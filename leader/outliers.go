package leader

import (
	"cmp"
	"math"
	"slices"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// retestCandidates are the pairs the leader tests again before the next
// full cycle, sorted by pair: those whose latest test ran beside traffic
// and may read more now (contendedPairs), and those whose latest test
// read far below both nodes' other tests on their switch with no traffic
// beside it (outlierPairs). A pair in both keeps its lowest reading and
// its newest test time.
func retestCandidates(st *raftfsm.State, nodes []Node, members []string) []contended {
	out := contendedPairs(nodes, members)
	more := outlierPairs(st, nodes, members)
	if len(more) == 0 {
		return out
	}
	for _, o := range more {
		i, found := slices.BinarySearchFunc(out, o.Pair, comparePair)
		if !found {
			out = slices.Insert(out, i, o)
			continue
		}
		out[i].At, out[i].Mbps = max(out[i].At, o.At), min(out[i].Mbps, o.Mbps)
	}
	return out
}

func comparePair(c contended, p probeplan.Pair) int {
	return cmp.Or(cmp.Compare(c.A, p.A), cmp.Compare(c.B, p.B))
}

// outlierPairs lists, sorted by pair, the pairs of members on one switch
// (declared, else recorded in raft) whose latest test read, in either
// direction, under half of what both nodes' other tests on that switch
// read at best, with neither end counting traffic beside it, and whose
// nodes' link checks do not read their links slower
// (probeplan.OutlierDue). Placement reads such a reading for the link
// until the next full cycle otherwise; the catch-up tests it again as it
// does a reading beside traffic (RetestTries, once per reading).
func outlierPairs(st *raftfsm.State, nodes []Node, members []string) []contended {
	live := make(map[string]bool, len(members))
	for _, m := range members {
		live[m] = true
	}
	sw := map[string]string{}
	slower := map[string]bool{}
	for _, n := range nodes {
		if !live[n.Name] {
			continue
		}
		s := n.Attrs.Switch
		if s == "" && st != nil {
			s = st.InferredSwitch(n.Name)
		}
		if s != "" {
			sw[n.Name] = s
		}
		slower[n.Name] = n.Link.Change == probeplan.LinkSlower
	}
	fast := make(map[string]topTwo, len(sw))
	for _, n := range nodes {
		if sw[n.Name] == "" {
			continue
		}
		var t topTwo
		for _, c := range n.Net {
			if sw[c.Peer] == sw[n.Name] {
				t.add(c.Peer, max(c.OutMbps, c.InMbps))
			}
		}
		fast[n.Name] = t
	}
	var rows map[string][]nodestate.NetEntry // built at the first candidate: most rounds have none
	found := map[probeplan.Pair]contended{}
	for _, n := range nodes {
		s := sw[n.Name]
		if s == "" {
			continue
		}
		for _, c := range n.Net {
			if sw[c.Peer] != s {
				continue
			}
			for _, out := range []bool{true, false} {
				rate, car, at := c.InMbps, c.CarriedInMbps, c.InAt
				if out {
					rate, car, at = c.OutMbps, c.CarriedOutMbps, c.OutAt
				}
				if at == 0 || !quietEnd(rate, car) ||
					!probeplan.OutlierDue(rate, fast[n.Name].besides(c.Peer), fast[c.Peer].besides(n.Name), slower[n.Name] || slower[c.Peer]) {
					continue
				}
				if rows == nil {
					rows = nodeRows(nodes)
				}
				if !peerQuiet(testEnds{rows: rows}.cell(c.Peer, n.Name), rate, at, out) {
					continue
				}
				p := probeplan.NewPair(n.Name, c.Peer)
				f, seen := found[p]
				if !seen {
					f = contended{Pair: p, Mbps: rate}
				}
				f.At, f.Mbps = max(f.At, at), min(f.Mbps, rate)
				found[p] = f
			}
		}
	}
	out := make([]contended, 0, len(found))
	for _, f := range found {
		out = append(out, f)
	}
	slices.SortFunc(out, func(x, y contended) int { return comparePair(x, y.Pair) })
	return out
}

// quietEnd reports whether an end counted its link carrying nothing
// besides a test of rate (carried, the test included; 0: not counted,
// which proves nothing quiet).
func quietEnd(rate, carried float64) bool {
	x := carried - rate
	return carried > 0 && (x < 1 || x < contendedShare*rate)
}

// peerQuiet reports whether the peer's cell for the same test (pc, nil:
// none), the other way round in its row, shows no traffic beside it; a
// peer that did not count, or recorded another test, does not object.
func peerQuiet(pc *nodestate.NetEntry, rate float64, at int64, out bool) bool {
	if pc == nil {
		return true
	}
	prate, pat, pcar := pc.OutMbps, pc.OutAt, pc.CarriedOutMbps
	if out {
		prate, pat, pcar = pc.InMbps, pc.InAt, pc.CarriedInMbps
	}
	if math.Abs(prate-rate) > 0.05 || abs64(pat-at) > sameTestMs || pcar == 0 {
		return true
	}
	return quietEnd(prate, pcar)
}

// topTwo keeps a node's two fastest readings with their peers.
type topTwo struct {
	peer [2]string
	mbps [2]float64
}

func (t *topTwo) add(peer string, mbps float64) {
	switch {
	case mbps > t.mbps[0]:
		t.peer[1], t.mbps[1] = t.peer[0], t.mbps[0]
		t.peer[0], t.mbps[0] = peer, mbps
	case mbps > t.mbps[1]:
		t.peer[1], t.mbps[1] = peer, mbps
	}
}

// besides is the fastest reading with a peer other than peer (0: none).
func (t topTwo) besides(peer string) float64 {
	if t.peer[0] == peer {
		return t.mbps[1]
	}
	return t.mbps[0]
}
