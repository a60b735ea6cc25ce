package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/placement"
)

// minMargin is how much higher (relative) T must be for the best group
// that is not oracle-class than for the best oracle-class group, on a
// perfect snapshot of each case. A live view is not perfect: a test
// read under other traffic, a traffic sample a few seconds old. With
// the linear complement as netload's bandwidth term the margins were
// 2.3 % (asym10), 3.3 % (lab12) and 9.1 % (bulk10), and netload's live
// choices flipped between oracle-class groups and mixed ones from one
// repetition to the next (on the testbed, docs/design/experiment.md).
const minMargin = 0.10

// TestCasesMargin scores every 4-node group of each case with netload's
// T (Place with a hostfile of the group) on the case's perfect snapshot
// and checks that the oracle-class groups (no hog node, slowest pair as
// fast as the oracle's) win by minMargin.
func TestCasesMargin(t *testing.T) {
	t.Parallel()
	for _, c := range casePhases {
		t.Run(fmt.Sprintf("%s/%d", c.name, c.phase), func(t *testing.T) {
			t.Parallel()
			m, _, best := caseOracle(t, c.name, c.phase)
			s := m.snapshot()
			var names []string
			for _, n := range s.Nodes {
				names = append(names, n.Name)
			}
			slices.Sort(names)
			in, out := math.Inf(1), math.Inf(1)
			var gIn, gOut []string
			var walk func(start int, g []string)
			walk = func(start int, g []string) {
				if len(g) < 4 {
					for i := start; i < len(names); i++ {
						walk(i+1, append(g, names[i]))
					}
					return
				}
				hf := make([]placement.HostSlots, len(g))
				for i, h := range g {
					hf[i] = placement.HostSlots{Host: h, Slots: 1}
				}
				d, err := placement.Place(s, placement.Request{N: 4, Oversubscribe: true, Force: true, Hostfile: hf})
				if err != nil {
					t.Fatalf("%v: %v", g, err)
				}
				v, _, hogs := m.groupStats(g)
				switch T := d.Score.T; {
				case hogs == 0 && v >= best && T < in:
					in, gIn = T, slices.Clone(g)
				case (hogs > 0 || v < best) && T < out:
					out, gOut = T, slices.Clone(g)
				}
			}
			walk(0, nil)
			if math.IsInf(in, 1) || math.IsInf(out, 1) {
				t.Fatalf("best oracle-class group %v, best other %v: want one of each to compare", gIn, gOut)
			}
			vOut, _, _ := m.groupStats(gOut)
			margin := (out - in) / in
			t.Logf("best oracle-class group %v at T %.4f; best other %v (%.0f Mbit/s) at T %.4f: margin %.1f %%", gIn, in, gOut, vOut, out, 100*margin)
			if margin < minMargin {
				t.Errorf("the best group that is not oracle-class, %v (%.0f Mbit/s), scores T %.4f, within %.1f %% of the best oracle-class group's %.4f (%v); want at least %.0f %%",
					gOut, vOut, out, 100*margin, in, gIn, 100*minMargin)
			}
		})
	}
}

// TestCasesRTTNoise gives netload each case's perfect snapshot with its
// RTTs replaced by scheduler noise, as this 2-core host measures them
// between namespaces (uniform in 0.05-2.05 ms, seeded), 50 times per case,
// and wants an oracle-class group in at least 45; and again with every
// rate and traffic figure 10 and 100 times the testbed's (1-20 Gbit/s
// links, the same RTT noise). With the RTT and the bandwidth each divided
// by its own sum over the measured pairs (Eq. 2 as written)
// netload was oracle-class in 44 (lab12), 34 (bulk10) and 40 (degrade10
// after its change) of 50 at every scale: microseconds of noise weighed
// as much as the spread of the link rates. With the RTT in units of the
// time 64 KiB take on the fastest link alone it was 50
// everywhere at the testbed's rates, but 40 at 10 times and 0-9 at 100
// times them: on fast links a millisecond of noise outweighed any rate.
//
// degrade10 before its change at 10 and 100 times the rates wants 40, not
// 45: its oracle-class groups beat the next by n05's 80 Mbit/s against
// 100 (800 against 1,000 at x10), and RTTs of up to 2 ms, four times what
// a 64 KiB message takes at 1 Gbit/s, would matter as much if they were
// real. Under Eq. 1's compute load the test passed there (49 of 50) because Eq. 1
// magnified n05's idle load of 0.10 against the others' 0.02-0.09 (the new
// T gets 42); with every idle load set to 0.05 the old T and the new both
// get 41.
func TestCasesRTTNoise(t *testing.T) {
	t.Parallel()
	const tries = 50
	for _, c := range casePhases {
		for _, scale := range []float64{1, 10, 100} {
			want := 45
			if c.name == "degrade10" && c.phase == 0 && scale > 1 {
				want = 40
			}
			t.Run(fmt.Sprintf("%s/%d/x%v", c.name, c.phase, scale), func(t *testing.T) {
				t.Parallel()
				ok := oracleClassWithRTTs(t, c.name, c.phase, scale, tries, 1, func(r *rand.Rand) float64 {
					return 0.05 + 2*r.Float64()
				})
				t.Logf("oracle-class in %d of %d noisy snapshots", ok, tries)
				if ok < want {
					t.Errorf("netload chose an oracle-class group in %d of %d snapshots with noisy RTTs, want at least %d", ok, tries, want)
				}
			})
		}
	}
}

// oracleClassWithRTTs counts in how many of tries snapshots of a case
// (its perfect snapshot, rates times scale, every RTT drawn in ms by rtt
// from a generator seeded with the try and stream) netload chooses an
// oracle-class group.
func oracleClassWithRTTs(t *testing.T, name string, phase int, scale float64, tries int, stream uint64, rtt func(*rand.Rand) float64) int {
	t.Helper()
	m, _, best := caseOracle(t, name, phase)
	ok := 0
	for seed := range uint64(tries) {
		s := scaled(m.snapshot(), scale)
		r := rand.New(rand.NewPCG(seed, stream))
		for i := range s.Links {
			s.Links[i].RTTus = rtt(r) * 1e3
		}
		g := pickOn(t, s, placement.PolicyNetload, 4)
		if v, _, hogs := m.groupStats(g); hogs == 0 && v >= best {
			ok++
		}
	}
	return ok
}

// scaled multiplies every rate and traffic figure of s by k.
func scaled(s placement.Snapshot, k float64) placement.Snapshot {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		n.NetTxBytesPerSec, n.NetRxBytesPerSec = n.NetTxBytesPerSec*k, n.NetRxBytesPerSec*k
		n.NetFlow = nodestate.Means{Now: n.NetFlow.Now * k, M1: n.NetFlow.M1 * k, M5: n.NetFlow.M5 * k, M15: n.NetFlow.M15 * k}
	}
	k32 := float32(k)
	for i := range s.Links {
		l := &s.Links[i]
		l.AvailMbps, l.PeakMbps = l.AvailMbps*k, l.PeakMbps*k
		l.OutMbps, l.InMbps, l.PeakOutMbps, l.PeakInMbps = l.OutMbps*k32, l.InMbps*k32, l.PeakOutMbps*k32, l.PeakInMbps*k32
	}
	return s
}

// TestCasesRTTSpikes is TestCasesRTTNoise with the noise the pings of a
// loaded host show: most RTTs 0.04-0.3 ms, one in eight 1.5-3 ms (the RTT
// matrix of a degrade10 cold start on the testbed: 2.3, 3.0, 1.6 ms on three
// pairs of the oracle's group, 0.05-0.3 elsewhere), at the testbed's rates.
// With the RTT over the median RTT alone, a 3 ms pair cost as much as 30
// typical ones, netload was oracle-class in 22-50 of 50 (bulk10 28,
// degrade10 24 and 22 after its change) and left the oracle's group at
// that cold start;
// the RTT's unit is now at least the time 64 KiB take on the fastest link
// (2.6-5.2 ms here). Not at 10 or 100 times the rates: there a 3 ms RTT is
// 60 times a 64 KiB message's transfer, and if it were real it would
// matter; one ping cannot tell a spike from a slow path. Filtering spikes
// is the probe's job (the least RTT of several pings), not done yet.
func TestCasesRTTSpikes(t *testing.T) {
	t.Parallel()
	const tries, want = 50, 45
	for _, c := range casePhases {
		t.Run(fmt.Sprintf("%s/%d", c.name, c.phase), func(t *testing.T) {
			t.Parallel()
			ok := oracleClassWithRTTs(t, c.name, c.phase, 1, tries, 2, func(r *rand.Rand) float64 {
				if r.IntN(8) == 0 {
					return 1.5 + 1.5*r.Float64()
				}
				return 0.04 + 0.26*r.Float64()
			})
			t.Logf("oracle-class in %d of %d snapshots with RTT spikes", ok, tries)
			if ok < want {
				t.Errorf("netload chose an oracle-class group in %d of %d snapshots with RTT spikes, want at least %d", ok, tries, want)
			}
		})
	}
}

// TestCasesIdleLoads draws every idle node's load anew (0-0.1 on its 2
// cores; a hog node keeps its load) and every link's rates within 10 % of
// the configured, at the testbed's rates and ten times them, and wants
// netload oracle-class in 48 of 50. The loads of idle nodes say nothing
// about how fast a job runs on them, and must not decide a placement:
// under Eq. 1's compute load (each load over their sum, against a
// reference that follows the cluster's mean) netload was oracle-class in
// 26-50 of 50 (degrade10 before its change 26 and 27, bulk10 39 twice,
// asym10 40 twice; lab12 and degrade10 after its change 50); with the
// compute load as how busy each node is, 50 of 50 in every cell.
func TestCasesIdleLoads(t *testing.T) {
	t.Parallel()
	const tries, want = 50, 48
	for _, c := range casePhases {
		for _, scale := range []float64{1, 10} {
			t.Run(fmt.Sprintf("%s/%d/x%v", c.name, c.phase, scale), func(t *testing.T) {
				t.Parallel()
				m, _, best := caseOracle(t, c.name, c.phase)
				ok := 0
				for seed := range uint64(tries) {
					s := scaled(m.snapshot(), scale)
					r := rand.New(rand.NewPCG(seed, 3))
					for i := range s.Nodes {
						if n := &s.Nodes[i]; n.CPUUtil.M1 == 0 { // no hog
							l := 0.1 * r.Float64()
							n.Load = nodestate.Means{Now: l, M1: l, M5: l, M15: l}
						}
					}
					for i := range s.Links {
						l := &s.Links[i]
						l.RTTus = 1e3 * (0.05 + 0.3*r.Float64())
						f := 0.9 + 0.2*r.Float64()
						l.AvailMbps *= f
						l.OutMbps *= float32(f)
						l.InMbps *= float32(f)
					}
					g := pickOn(t, s, placement.PolicyNetload, 4)
					if v, _, hogs := m.groupStats(g); hogs == 0 && v >= best {
						ok++
					}
				}
				t.Logf("oracle-class in %d of %d snapshots with idle loads and rates drawn anew", ok, tries)
				if ok < want {
					t.Errorf("netload chose an oracle-class group in %d of %d snapshots with idle loads drawn anew, want at least %d", ok, tries, want)
				}
			})
		}
	}
}
