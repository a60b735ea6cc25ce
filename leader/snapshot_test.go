package leader

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/netmodel"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// TestSnapshot_DerivedLinks: a pair without a direct test gets the
// model's figure, marked Derived; a measured pair keeps only its
// measurement; an undeclared node takes raft's inferred switch; a node of
// unknown switch gets no derived link.
func TestSnapshot_DerivedLinks(t *testing.T) {
	t.Parallel()
	st := raftfsm.NewState()
	st.Switches = map[string]string{"b1": "~b1", "b2": "~b1"}
	nodes := []Node{testNode("a1"), testNode("a2"), testNode("a3"), testNode("b1"), testNode("b2"), testNode("u")}
	for i := range nodes[:3] {
		nodes[i].Attrs.Switch = "A"
	}
	row := func(i int, peer string, bw float64) {
		nodes[i].Net = append(nodes[i].Net, nodestate.NetEntry{Peer: peer, AvailMbps: bw, PeakMbps: bw, BWAt: 1000, RTT1us: 200})
	}
	row(0, "a2", 940) // a1-a2
	row(1, "a3", 95)  // a2-a3: a3 has a 100 Mbit/s port
	row(3, "b2", 900) // b1-b2
	row(0, "b1", 300) // switch pair A-~b1
	snap := Snapshot(st, nodes, t0)
	links := map[[2]string]placement.Link{}
	for _, l := range allLinks(snap) {
		k := [2]string{l.From, l.To}
		if _, dup := links[k]; dup {
			t.Fatalf("link %v twice", k)
		}
		links[k] = l
	}
	for _, c := range []struct {
		from, to string
		derived  bool
		peak     float64
	}{
		{"a1", "a2", false, 940},
		{"a1", "a3", true, 95},
		{"a2", "b2", true, 300},
		{"a3", "b1", true, 95},
		{"b1", "b2", false, 900},
	} {
		l, ok := links[[2]string{c.from, c.to}]
		if !ok || l.Derived != c.derived || l.PeakMbps != c.peak || !l.Measured {
			t.Errorf("%s-%s: %+v (present %v), want derived %v peak %v", c.from, c.to, l, ok, c.derived, c.peak)
		}
	}
	for k := range links {
		if k[0] == "u" || k[1] == "u" {
			t.Errorf("a link with u, of unknown switch: %v", links[k])
		}
	}
	for _, n := range snap.Nodes {
		want := map[string]string{"a1": "A", "a2": "A", "a3": "A", "b1": "~b1", "b2": "~b1", "u": ""}[n.Name]
		if n.Switch != want {
			t.Errorf("%s on %q, want %q", n.Name, n.Switch, want)
		}
	}
}

// derivedWorld is n nodes on switches of 16 whose rows hold what the
// topology planner measures: each node's two ring neighbours on its
// switch, and one test per switch pair, each direction apart and with no
// direct RTT (the coordinates estimate it); every node has a coordinate,
// a traffic sample and a history of 8 traffic steps, so every
// cross-switch test is stamped (stampCarried) as on a busy cluster.
func derivedWorld(n int) (*raftfsm.State, []Node) {
	var nodes []Node
	for i := range n {
		nd := testNode(fmt.Sprintf("n%04d", i))
		nd.Attrs.Switch = fmt.Sprintf("s%03d", i/16)
		nd.Attrs.NetTxBytesPerSec, nd.Attrs.NetRxBytesPerSec = float64(i%7)*1e6, float64(i%5)*1e6
		nd.Coord = coordAt(0.0001*float64(i/16) + 0.00001*float64(i%16))
		// Steps 20 s apart over the last cycle and a half, as a busy
		// node's would be (a step is a change of its traffic).
		for k := range 8 {
			nd.Traffic = append(nd.Traffic, nodestate.TrafficPoint{At: int64(100_000 + k*20_000 + i%1000), Rx: float64((i+k)%5) * 1e6, Tx: float64((i*k)%7) * 1e6})
		}
		nodes = append(nodes, nd)
	}
	for i := range nodes {
		s := i / 16
		j := s*16 + (i%16+1)%16
		if j < n && j != i {
			nodes[i].Net = append(nodes[i].Net, nodestate.NetEntry{Peer: nodes[j].Name, AvailMbps: 900, PeakMbps: 940, BWAt: 1000,
				OutMbps: 900 + float64(i%3), InMbps: 910, PeakOutMbps: 940, PeakInMbps: 940})
		}
	}
	sw := (n + 15) / 16
	for a := range sw {
		for b := a + 1; b < sw; b++ {
			nodes[a*16].Net = append(nodes[a*16].Net, nodestate.NetEntry{Peer: nodes[b*16].Name, AvailMbps: 300, PeakMbps: 400, BWAt: 1000,
				OutMbps: 300, InMbps: 320 + float64(b%5), PeakOutMbps: 400, PeakInMbps: 400, OutAt: 200_000 + int64(b)*10, InAt: 200_000 + int64(a)*10})
		}
	}
	return raftfsm.NewState(), nodes
}

// BenchmarkSnapshotDerived times the leader's snapshot with derived links
// and the netload placement on it, at 64 and 1,000 nodes, apart and
// together (round: what one placement costs the leader, inputs included),
// with CPU time per op besides the wall time:
//
//	go test -run XXX -bench SnapshotDerived -benchtime 10x ./leader/
func BenchmarkSnapshotDerived(b *testing.B) {
	for _, n := range []int{64, 1000} {
		st, nodes := derivedWorld(n)
		b.Run(fmt.Sprintf("nodes=%d/snapshot", n), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				Snapshot(st, nodes, t0)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
		})
		snap := Snapshot(st, nodes, t0)
		req := placement.Request{N: 64, Policy: "netload", Oversubscribe: true, Force: true}
		b.Run(fmt.Sprintf("nodes=%d/place-n=64", n), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if _, err := placement.Place(snap, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
		})
		b.Run(fmt.Sprintf("nodes=%d/round-n=64", n), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if _, err := placement.Place(Snapshot(st, nodes, t0), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user + system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
		{Name: "a", Status: nodestate.StatusAlive, HasState: true, Coord: coordAt(0.001), Net: []nodestate.NetEntry{
			{Peer: "b", AvailMbps: 10, PeakMbps: 950, BWAt: 1, OutMbps: 940, InMbps: 10, PeakOutMbps: 950, PeakInMbps: 10},
			{Peer: "c", RTT1us: 250, RTTAt: 1, AvailMbps: 500, PeakMbps: 500, BWAt: 1}}},
		{Name: "b", Status: nodestate.StatusAlive, HasState: true, Coord: coordAt(0.004)},
		{Name: "c", Status: nodestate.StatusAlive, HasState: true},
	}
	snap := Snapshot(raftfsm.NewState(), nodes, t0)
	if len(snap.Links) != 2 {
		t.Fatalf("links %+v", snap.Links)
	}
	ab, ac := snap.Links[0], snap.Links[1]
	want := placement.Link{From: "a", To: "b", AvailMbps: 10, PeakMbps: 950, Measured: true,
		OutMbps: 940, InMbps: 10, PeakOutMbps: 950, PeakInMbps: 10, RTTus: ab.RTTus, RTTEstimated: true}
	if ab != want || math.Abs(ab.RTTus-3000) > 50 { // plus the default heights, 10 µs each
		t.Fatalf("a->b = %+v; want %+v with RTT 3,000 µs from the coordinates", ab, want)
	}
	if ac.RTTEstimated || ac.RTTus != 250 {
		t.Fatalf("a->c = %+v; want the direct 250 µs, not estimated", ac)
	}
	// No estimate without both coordinates, nor across dimensionalities.
	nodes[1].Coord = nil
	if l := Snapshot(raftfsm.NewState(), nodes, t0).Links[0]; l.RTTEstimated || l.RTTus != 0 {
		t.Fatalf("one coordinate missing: %+v", l)
	}
	odd := coordinate.DefaultConfig()
	odd.Dimensionality = 3
	nodes[1].Coord = coordinate.NewCoordinate(odd)
	if l := Snapshot(raftfsm.NewState(), nodes, t0).Links[0]; l.RTTEstimated {
		t.Fatalf("incompatible coordinates gave an estimate: %+v", l)
	}
}

// allLinks is snap's links followed by those its Model derives, as one
// new slice, as placement reads them.
func allLinks(snap placement.Snapshot) []placement.Link {
	out := slices.Clone(snap.Links)
	if snap.Model != nil {
		snap.Model.Each(len(snap.Nodes), func(i, j int, rtt, avail, peak float64) {
			out = append(out, placement.Link{From: snap.Nodes[i].Name, To: snap.Nodes[j].Name, RTTus: rtt,
				AvailMbps: avail, PeakMbps: peak, Measured: true, Derived: true})
		})
	}
	return out
}

// TestSnapshot_ModelPlacesAsLinks: the derived links handed over as the
// model's tables (Snapshot.Model) are netmodel.Model.Pair's (the naive
// reference, per pair by name) for every pair without a bandwidth test,
// link for link and bit for bit, and place exactly as the same links
// given as Links did, on a world with directions, coordinates and
// traffic, and a node of unknown switch.
func TestSnapshot_ModelPlacesAsLinks(t *testing.T) {
	t.Parallel()
	st, nodes := derivedWorld(200)
	nodes[7].Attrs.Switch = "" // unknown: no derived link
	// RTT only, no bandwidth test: derived links with their direct RTTs,
	// 0.7 and 0.3 ms, not their switch pair's mean (0.5 ms)
	nodes[5].Net = append(nodes[5].Net, nodestate.NetEntry{Peer: nodes[40].Name, RTT1us: 700, RTTAt: 1000})
	nodes[6].Net = append(nodes[6].Net, nodestate.NetEntry{Peer: nodes[41].Name, RTT1us: 300, RTTAt: 1000})
	snap := Snapshot(st, nodes, t0)
	asg := netmodel.Assignment{}
	var names []string
	for _, n := range snap.Nodes {
		names = append(names, n.Name)
		if n.Switch != "" {
			asg[n.Name] = netmodel.Switch{Name: n.Switch}
		}
	}
	_, _, ms := modelInputs(nodes)
	md := netmodel.Build(asg, ms, netmodel.DefaultConfig())
	var want []placement.Link
	for i, a := range names {
		for _, b := range names[i+1:] {
			if e := md.Pair(a, b); e.Known && !md.Measured(a, b) {
				want = append(want, placement.Link{From: a, To: b, RTTus: e.RTTus, AvailMbps: e.AvailMbps, PeakMbps: e.PeakMbps, Measured: true, Derived: true})
			}
		}
	}
	all := allLinks(snap)
	if got := all[len(snap.Links):]; !reflect.DeepEqual(got, want) {
		t.Fatalf("%d derived links from the model, netmodel's Pair gives %d (or they differ)", len(got), len(want))
	}
	named := snap
	named.Links, named.Model = all, nil
	if d := len(named.Links) - len(snap.Links); d < 15000 {
		t.Fatalf("%d derived pairs, want most of the 19,900", d)
	}
	// With traffic crossing switches netload's uplink term needs the
	// model's switches (placement/direction.go), which the links alone do
	// not carry: there, the same hosts for paper; without traffic, the
	// same decision for both policies.
	quiet := func(s placement.Snapshot) placement.Snapshot {
		s.Nodes = slices.Clone(s.Nodes)
		for i := range s.Nodes {
			s.Nodes[i].NetTxBytesPerSec, s.Nodes[i].NetRxBytesPerSec = 0, 0
		}
		return s
	}
	for _, traffic := range []bool{false, true} {
		a, b := quiet(snap), quiet(named)
		if traffic {
			a, b = snap, named
		}
		for _, n := range []int{8, 64, 300} {
			for _, pol := range []string{"netload", "paper"} {
				req := placement.Request{N: n, Policy: pol, Oversubscribe: true, Force: true}
				d1, err1 := placement.Place(a, req)
				d2, err2 := placement.Place(b, req)
				same := reflect.DeepEqual(d1, d2)
				if traffic {
					same = pol == "netload" || reflect.DeepEqual(d1.Hosts, d2.Hosts)
				}
				if err1 != nil || err2 != nil || !same {
					t.Fatalf("traffic %v, n=%d %s: with pairs %+v (%v)\nwith links %+v (%v)", traffic, n, pol, d1, err1, d2, err2)
				}
			}
		}
	}
}

// TestSnapshot_TestsStampedWithCrossingTraffic: a test between switches
// A and B is stamped with the least that crossed the same way over the
// 5 s before it ended (the nodes' traffic steps), and the model hands
// placement the sum as the uplink's capacity that way (SwCap): lab12's
// case, a 30 Mbit/s flow b2 -> a2 crossing B -> A while a1 <-> b1 was
// tested (51 A -> B, 36.6 B -> A), though b2's and a2's sampling began
// within those 5 s (before its first step a node counts at its first
// step, not as idle). A flow that began within those 5 s (a1 -> b1) or
// after the test (b1's) adds nothing; a test up to 30 s before the
// histories begin takes their first step (a2 -> c1), an older one is not
// stamped (a1 -> c1).
func TestSnapshot_TestsStampedWithCrossingTraffic(t *testing.T) {
	t.Parallel()
	st := raftfsm.NewState()
	nodes := []Node{testNode("a1"), testNode("a2"), testNode("b1"), testNode("b2"), testNode("c1")}
	for i, sw := range []string{"A", "A", "B", "B", "C"} {
		nodes[i].Attrs.Switch = sw
		nodes[i].Traffic = []nodestate.TrafficPoint{{At: 100_000}}
	}
	const flow = 30e6 / 8                                                                                                              // bytes/s
	nodes[3].Traffic = []nodestate.TrafficPoint{{At: 107_000, Tx: flow}}                                                               // b2 sends; its sampling began inside the window
	nodes[1].Traffic = []nodestate.TrafficPoint{{At: 108_000, Rx: flow}}                                                               // a2 receives, sampled from 108 s on
	nodes[0].Traffic = []nodestate.TrafficPoint{{At: 100_000}, {At: 109_500, Tx: 9 * flow}}                                            // a1 starts sending 0.5 s before the test ends
	nodes[2].Traffic = []nodestate.TrafficPoint{{At: 100_000}, {At: 109_500, Rx: 9 * flow}, {At: 120_000, Rx: 9 * flow, Tx: 9 * flow}} // b1 receives a1's, from 0.5 s before the test ends; sends after it
	nodes[4].Traffic = []nodestate.TrafficPoint{{At: 100_000, Rx: flow}, {At: 130_000}}                                                // c1 received until 130 s
	cell := func(peer string, out, in float64, at int64) nodestate.NetEntry {
		return nodestate.NetEntry{Peer: peer, AvailMbps: min(out, in), PeakMbps: max(out, in), BWAt: at, OutMbps: out, InMbps: in,
			PeakOutMbps: out, PeakInMbps: in, OutAt: at, InAt: at}
	}
	nodes[0].Net = []nodestate.NetEntry{cell("b1", 51, 36.6, 110_000), cell("c1", 20, 20, 50_000)}
	nodes[1].Net = []nodestate.NetEntry{cell("c1", 25, 25, 80_000)}
	snap := Snapshot(st, nodes, t0)
	m := snap.Model
	sw := map[string]int32{}
	for i, n := range snap.Nodes {
		sw[n.Name] = m.Sw[i]
	}
	at := func(a, b string) float64 {
		if m.SwCap == nil {
			return -1
		}
		return m.SwCap[int(sw[a])*m.NS+int(sw[b])]
	}
	for _, c := range []struct {
		from, to string
		want     float64
		why      string
	}{
		{"a1", "b1", 51, "nothing crossed A -> B for the whole window (the flow a1 -> b1 began inside it)"},
		{"b1", "a1", 36.6 + 30, "b2 -> a2 crossed during the test; b1's later flow did not"},
		{"a1", "c1", 25 + 0, "a2 -> c1 at 80 s, 20 s before the histories: their first step (A sent nothing); a1 -> c1 at 50 s is too old"},
		{"c1", "a1", 25 + 0, "C -> A: c1 sent nothing (it only received)"},
	} {
		if got := at(c.from, c.to); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s -> %s carried %v, want %v: %s", c.from, c.to, got, c.want, c.why)
		}
	}
}

// BenchmarkStampCarried times stampCarried alone on derivedWorld's 1,000
// nodes (63 switches, every node with 8 traffic steps, 1,953 stamped
// cross-switch tests):
//
//	go test -run XXX -bench StampCarried ./leader/
func BenchmarkStampCarried(b *testing.B) {
	st, nodes := derivedWorld(1000)
	asg := netmodel.Assignment{}
	for _, n := range nodes {
		if sw, ok := modelSwitch(st, n.Name, n.Attrs.Switch); ok {
			asg[n.Name] = sw
		}
	}
	_, _, ms := modelInputs(nodes)
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		stampCarried(asg, nodes, ms)
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

// TestSnapshot_DirectTestGetsEndTrafficBack: a direct test that ran while
// both of its ends carried a job's traffic gets the smaller of the two
// back, up to the direction's fastest test (placement takes each end's
// traffic now off its capacity instead); a test with one quiet end, or
// two, keeps its reading: a link that degraded must show at once, even
// when the other end was busy elsewhere.
func TestSnapshot_DirectTestGetsEndTrafficBack(t *testing.T) {
	t.Parallel()
	nodes := []Node{testNode("a"), testNode("b"), testNode("c"), testNode("d"), testNode("e")}
	const mbit = 1e6 / 8                                                                     // bytes/s per Mbit/s
	nodes[0].Traffic = []nodestate.TrafficPoint{{At: 100_000, Tx: 50 * mbit}, {At: 200_000}} // a sent a job's 50 Mbit/s until 200 s
	nodes[1].Traffic = []nodestate.TrafficPoint{{At: 100_000, Rx: 40 * mbit}, {At: 200_000}} // b received 40 of it
	nodes[2].Traffic = []nodestate.TrafficPoint{{At: 100_000, Tx: 90 * mbit}}                // c sends 90 elsewhere
	nodes[3].Traffic = []nodestate.TrafficPoint{{At: 100_000}}
	nodes[4].Traffic = []nodestate.TrafficPoint{{At: 100_000}}
	cell := func(peer string, out, in, peakOut, peakIn float64) nodestate.NetEntry {
		return nodestate.NetEntry{Peer: peer, AvailMbps: min(out, in), PeakMbps: max(peakOut, peakIn), BWAt: 150_000, OutMbps: out, InMbps: in,
			PeakOutMbps: peakOut, PeakInMbps: peakIn, OutAt: 150_000, InAt: 150_000}
	}
	nodes[0].Net = []nodestate.NetEntry{cell("b", 50, 95, 100, 100)}
	nodes[2].Net = []nodestate.NetEntry{cell("d", 10, 10, 100, 100)} // d's link degraded to 10
	nodes[3].Net = []nodestate.NetEntry{cell("e", 10, 10, 100, 100)} // so did e's; d and e are quiet
	checkRates(t, Snapshot(raftfsm.NewState(), nodes, t0), []wantRates{
		{"a", "b", 90, 95, "a -> b read 50 while a sent 50 and b received 40: 40 back; b -> a, a received nothing"},
		{"c", "d", 10, 10, "c was busy elsewhere, d quiet: the degraded link stays at 10"},
		{"d", "e", 10, 10, "quiet ends: the degraded link stays at 10"},
	})
}

// TestSnapshot_DirectTestGetsCountedTrafficBack: where both ends counted
// what their links carried during the test (CarriedOutMbps, CarriedInMbps), the test gets
// back the smaller of the two counts less the reading, even when their
// traffic histories saw nothing (a 1-s job between two 3-s samples). An
// end whose count of that test is missing, or whose cell records another
// test, falls back to its history.
func TestSnapshot_DirectTestGetsCountedTrafficBack(t *testing.T) {
	t.Parallel()
	names := []string{"a", "b", "c", "d", "e", "f"}
	var nodes []Node
	for _, n := range names {
		nd := testNode(n)
		nd.Traffic = []nodestate.TrafficPoint{{At: 100_000}} // quiet in every sample
		nodes = append(nodes, nd)
	}
	at := int64(150_000)
	cell := func(peer string, out, carOut, in, carIn float64, outAt, inAt int64) nodestate.NetEntry {
		return nodestate.NetEntry{Peer: peer, AvailMbps: min(out, in), PeakMbps: 100, BWAt: max(outAt, inAt), OutMbps: out, InMbps: in,
			PeakOutMbps: 100, PeakInMbps: 100, OutAt: outAt, InAt: inAt, CarriedOutMbps: carOut, CarriedInMbps: carIn}
	}
	// a -> b ran beside a 1-s job a -> b: a sent 55 besides, b received 53.
	// The server (b) stamps the test 1.5 s before the client (a). The
	// rows are not sorted by peer here: the index sorts a copy.
	nodes[0].Net = []nodestate.NetEntry{cell("e", 44, 99, 95, 95.5, at, at), cell("b", 44, 99, 95, 95.5, at, at)}
	nodes[1].Net = []nodestate.NetEntry{cell("a", 95, 95.4, 44, 97, at-1500, at-1500)}
	// c -> d: c sent 90 elsewhere, d's link degraded to 10 and is quiet.
	nodes[2].Net = []nodestate.NetEntry{cell("d", 10, 100, 10, 10, at, at)}
	nodes[3].Net = []nodestate.NetEntry{cell("c", 10, 10, 10, 10, at, at)}
	// e has no cell for a (its row has not come): its history (quiet)
	// stands in. f's cell for a is an older test with another reading.
	nodes[5].Net = []nodestate.NetEntry{cell("a", 80, 99, 80, 99, at-60_000, at-60_000)}
	nodes[0].Net = append(nodes[0].Net, cell("f", 44, 99, 44, 99, at, at))
	checkRates(t, Snapshot(raftfsm.NewState(), nodes, t0), []wantRates{
		{"a", "b", 97, 95.4, "a -> b read 44, a carried 99 and b 97: 53 back; b -> a read 95, 0.4 and 0.5 besides"},
		{"b", "a", 95.4, 97, "b's row holds the same test the other way round"},
		{"c", "d", 10, 10, "c was busy elsewhere, d quiet: the degraded link stays at 10"},
		{"d", "c", 10, 10, "the same from d's row"},
		{"a", "e", 44, 95, "e has no count and its history is quiet: nothing back"},
		{"a", "f", 44, 44, "f's cell is another test: its history (quiet) stands in"},
	})
}

// wantRates is a link's two directions as a snapshot should hold them,
// and why.
type wantRates struct {
	from, to string
	fwd, rev float32
	why      string
}

// checkRates checks the links of snap against want.
func checkRates(t *testing.T, snap placement.Snapshot, want []wantRates) {
	t.Helper()
	got := map[[2]string][2]float32{}
	for _, l := range snap.Links {
		got[[2]string{l.From, l.To}] = [2]float32{l.OutMbps, l.InMbps}
	}
	for _, c := range want {
		if g := got[[2]string{c.from, c.to}]; g != [2]float32{c.fwd, c.rev} {
			t.Errorf("%s -> %s: fwd, rev = %v, want %v, %v: %s", c.from, c.to, g, c.fwd, c.rev, c.why)
		}
	}
}
