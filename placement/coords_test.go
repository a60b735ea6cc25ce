package placement_test

import (
	"slices"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

// tOn scores a group chosen on one snapshot against another (the truth):
// the same hosts and counts as a hostfile, nothing relaxed.
func tOn(t *testing.T, truth placement.Snapshot, d placement.Decision, req placement.Request) float64 {
	t.Helper()
	r := req
	r.Relax, r.Hostfile = "none", nil
	for _, h := range d.Hosts {
		r.Hostfile = append(r.Hostfile, placement.HostSlots{Host: h.Node, Slots: h.NP})
	}
	e, err := placement.Place(truth, r)
	if err != nil || e.Wait {
		t.Fatalf("score on the truth: %+v %v", e, err)
	}
	return e.Score.T
}

// TestNetload_CoordinateRTTsPlaceAsWell: on the
// synthetic clusters, netload given only Vivaldi estimates of the RTTs
// (fitted as the agents fit them, one ping per node per round) chooses
// groups whose T, scored on the true snapshot, is within 2% of the
// groups it chooses with the all-pairs RTT matrix, on average, and never
// 10% worse. Same-switch RTTs are 0.05-0.2 ms and cross-switch 0.3-1.5 ms
// (random per link), so the estimate must tell near from far, which is
// what coordinates do; the bandwidth term (w_bw 0.75) is untouched.
func TestNetload_CoordinateRTTsPlaceAsWell(t *testing.T) {
	t.Parallel()
	var ratios, medErrs []float64
	for seed := int64(1); seed <= 12; seed++ {
		truth := synth.Cluster(synth.Config{Nodes: 16, Switches: 4, Seed: seed})
		est, errs := synth.WithCoordinateRTTs(truth, seed, 200)
		slices.Sort(errs)
		medErrs = append(medErrs, errs[len(errs)/2])
		for _, n := range []int{16, 32} {
			req := placement.Request{N: n, Policy: "netload", Force: true, Oversubscribe: true}
			direct, err := placement.Place(truth, req)
			if err != nil {
				t.Fatal(err)
			}
			viaCoords, err := placement.Place(est, req)
			if err != nil {
				t.Fatal(err)
			}
			ratios = append(ratios, tOn(t, truth, viaCoords, req)/tOn(t, truth, direct, req))
		}
	}
	mean, worst := 0.0, 0.0
	for _, r := range ratios {
		mean += r / float64(len(ratios))
		worst = max(worst, r)
	}
	slices.Sort(medErrs)
	t.Logf("T with coordinate RTTs / T with direct RTTs over %d placements: mean %.4f, worst %.4f; median relative error of the estimates per cluster %.3f-%.3f",
		len(ratios), mean, worst, medErrs[0], medErrs[len(medErrs)-1])
	if medErrs[len(medErrs)-1] > 0.5 {
		t.Fatalf("the coordinates did not fit: median relative error up to %.3f", medErrs[len(medErrs)-1])
	}
	if mean > 1.02 || worst > 1.10 {
		t.Fatalf("placing on coordinate RTTs costs too much: mean %.4f, worst %.4f (want <= 1.02, <= 1.10)", mean, worst)
	}
}
