package leader

import (
	"math"
	"testing"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// coordAt is a coordinate at x seconds on the first axis, nothing else.
func coordAt(x float64) *coordinate.Coordinate {
	c := coordinate.NewCoordinate(coordinate.DefaultConfig())
	c.Vec[0] = x
	return c
}

// TestSnapshot_LinksDirectionsAndEstimates: a row's cell becomes a link
// with both directions (From is the row's owner), a cell measured by
// bandwidth only takes the coordinates' RTT estimate, marked estimated,
// and a direct RTT is never replaced.
func TestSnapshot_LinksDirectionsAndEstimates(t *testing.T) {
	t.Parallel()
	nodes := []Node{
		{Name: "a", Status: StatusAlive, HasState: true, Coord: coordAt(0.001), Net: []NetEntry{
			{Peer: "b", BW: 10, Peak: 950, BWAt: 1, BWOut: 940, BWIn: 10, PeakOut: 950, PeakIn: 10},
			{Peer: "c", RTTus: 250, RTTAt: 1, BW: 500, Peak: 500, BWAt: 1}}},
		{Name: "b", Status: StatusAlive, HasState: true, Coord: coordAt(0.004)},
		{Name: "c", Status: StatusAlive, HasState: true},
	}
	snap := Snapshot(raftfsm.NewState(), nodes)
	if len(snap.Links) != 2 {
		t.Fatalf("links %+v", snap.Links)
	}
	ab, ac := snap.Links[0], snap.Links[1]
	want := placement.Link{From: "a", To: "b", AvailMbps: 10, PeakMbps: 950, Measured: true,
		FwdMbps: 940, RevMbps: 10, FwdPeakMbps: 950, RevPeakMbps: 10, RTTms: ab.RTTms, RTTEstimated: true}
	if ab != want || math.Abs(ab.RTTms-3) > 0.05 { // plus the default heights, 10 µs each
		t.Fatalf("a->b = %+v; want %+v with RTT 3 ms from the coordinates", ab, want)
	}
	if ac.RTTEstimated || ac.RTTms != 0.25 {
		t.Fatalf("a->c = %+v; want the direct 0.25 ms, not estimated", ac)
	}
	// No estimate without both coordinates, nor across dimensionalities.
	nodes[1].Coord = nil
	if l := Snapshot(raftfsm.NewState(), nodes).Links[0]; l.RTTEstimated || l.RTTms != 0 {
		t.Fatalf("one coordinate missing: %+v", l)
	}
	odd := coordinate.DefaultConfig()
	odd.Dimensionality = 3
	nodes[1].Coord = coordinate.NewCoordinate(odd)
	if l := Snapshot(raftfsm.NewState(), nodes).Links[0]; l.RTTEstimated {
		t.Fatalf("incompatible coordinates gave an estimate: %+v", l)
	}
}
