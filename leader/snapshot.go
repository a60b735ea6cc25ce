package leader

import (
	"slices"
	"time"

	"github.com/hashicorp/serf/coordinate"
	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/vivaldi"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Snapshot turns what gossip observes and what raft holds into
// placement's input: nodes with their Table-1 attributes and the slots
// shoal jobs hold on them, and the links each node measured. Nodes whose
// gossiped state has not arrived are left out. A drained node is not
// alive to placement: it takes no new attempt, whatever gossip says.
// What shoal's attempts that ended before now left in the nodes' load and
// traffic is taken out (withoutEnded). A link its checks read slower is
// taken at their reading until its pairs are tested again
// (capChangedLinks).
func Snapshot(st *raftfsm.State, nodes []Node, now time.Time) placement.Snapshot {
	nodes = capChangedLinks(nodes)
	held := raftfsm.HeldSlots(st)
	var snap placement.Snapshot
	for _, nd := range nodes {
		if !nd.HasState {
			continue
		}
		n := nd.Attrs
		_, drained := st.Drained(nd.Name)
		n.Name, n.Alive, n.HeldSlots = nd.Name, nd.Status == nodestate.StatusAlive && !drained, held[nd.Name]
		snap.Nodes = append(snap.Nodes, n)
	}
	coords := nodeCoords(nodes)
	ends := testEnds{hist: nodeTraffic(nodes), rows: nodeRows(nodes)}
	for _, nd := range nodes {
		if nd.HasState {
			snap.Links = appendRowLinks(snap.Links, nd, coords, ends)
		}
	}
	deriveLinks(st, nodes, &snap)
	withoutEnded(&snap, st, nodes, now)
	return snap
}

// modelSwitch is the switch the network model puts a node on: the one it
// declares, else the one raft recorded for it (set_switches); false when
// neither is known. Placement's snapshot and the cold-start coverage both
// read it, so the model they build is the same.
func modelSwitch(st *raftfsm.State, name, declared string) (netmodel.Switch, bool) {
	if declared != "" {
		return netmodel.Switch{Name: declared}, true
	}
	if sw := st.InferredSwitch(name); sw != "" {
		return netmodel.Switch{Name: sw, Inferred: true}, true
	}
	return netmodel.Switch{}, false
}

// deriveLinks hands placement the network model: an
// undeclared node takes the switch raft recorded for it (set_switches),
// and snap.Model holds the tables placement derives every pair without a
// direct bandwidth test from, as it reads it. A pair the model cannot
// estimate (a node of unknown switch, a link never measured) stays
// missing, and placement's own rule for missing links applies.
func deriveLinks(st *raftfsm.State, nodes []Node, snap *placement.Snapshot) {
	asg := netmodel.Assignment{}
	names := make([]string, 0, len(snap.Nodes))
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		names = append(names, n.Name)
		if sw, ok := modelSwitch(st, n.Name, n.Switch); ok {
			n.Switch, asg[n.Name] = sw.Name, sw
		}
	}
	_, _, ms := modelInputs(nodes)
	stampCarried(asg, nodes, ms)
	// netmodel's tables are placement's PairModel, handed over as they
	// are: placement derives each pair's link as it reads it, where
	// ~500,000 links at 1,000 nodes were 40 MB of names per round to
	// build, for the garbage collector to scan and for placement to look
	// up.
	snap.Model = netmodel.Build(asg, ms, netmodel.DefaultConfig()).Tables(names)
}

// appendRowLinks turns nd's row into placement's links, one per peer it
// measured, with both directions as the row holds them (From is nd: Fwd
// is nd to the peer, Rev the peer to nd). A cell without a direct RTT
// takes the two nodes' coordinate estimate, marked RTTEstimated. Each
// direction's rate gets back what its ends carried besides its test
// (addBack, from ends: the ends' own counts, else their traffic
// histories; the zero value: none).
func appendRowLinks(links []placement.Link, nd Node, coords map[string]*coordinate.Coordinate, ends testEnds) []placement.Link {
	for _, ne := range nd.Net {
		if ne.BWAt == 0 && ne.RTTAt == 0 {
			continue
		}
		l := placement.Link{From: nd.Name, To: ne.Peer, RTTus: ne.RTT1us,
			AvailMbps: ne.AvailMbps, PeakMbps: ne.PeakMbps, Measured: ne.BWAt != 0,
			OutMbps: float32(ne.OutMbps), InMbps: float32(ne.InMbps), PeakOutMbps: float32(ne.PeakOutMbps), PeakInMbps: float32(ne.PeakInMbps)}
		if ne.RTTAt == 0 {
			d, ok := vivaldi.Distance(coords[nd.Name], coords[ne.Peer])
			l.RTTus, l.RTTEstimated = float64(d)/1e3, ok
		}
		if ne.OutMbps > 0 {
			l.OutMbps = float32(ends.addBack(nd.Name, &ne, true))
		}
		if ne.InMbps > 0 {
			l.InMbps = float32(ends.addBack(nd.Name, &ne, false))
		}
		links = append(links, l)
	}
	return links
}

// nodeCoords indexes the nodes' coordinates by name (nil: none has one).
func nodeCoords(nodes []Node) map[string]*coordinate.Coordinate {
	var out map[string]*coordinate.Coordinate
	for _, nd := range nodes {
		if nd.Coord == nil {
			continue
		}
		if out == nil {
			out = make(map[string]*coordinate.Coordinate, len(nodes))
		}
		out[nd.Name] = nd.Coord
	}
	return out
}

// placementRequest turns a job's spec into placement's question.
func placementRequest(j *raftfsm.Job, settings raftfsm.Settings) placement.Request {
	sp := j.Spec
	r := placement.Request{
		N: sp.NP, PPN: sp.PPN, CPUsPerProc: sp.CPUsPerRank, Policy: sp.Policy, Relax: sp.Relax, Oversubscribe: sp.Oversubscribe,
		Alpha: settings.Alpha, WLT: settings.WLT, WBW: settings.WBW, Seed: int64(j.ID)*7919 + int64(j.Attempt),
		Force: sp.Force,
	}
	if sp.Alpha != nil {
		r.Alpha = *sp.Alpha
	}
	// Copies: the spec is the replicated state's, which nothing but the
	// FSM may write, and a Request is placement's to use as it likes.
	r.Hostfile, r.PEs = slices.Clone(sp.Hostfile), slices.Clone(sp.PEs)
	return r
}
