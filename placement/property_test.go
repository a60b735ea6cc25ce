package placement_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

var relaxModes = []string{"all", "none", "loc", "dist", "loc+dist"}

// genCase derives a snapshot and a request from a few numbers, so generated
// cases and the fuzzer share one generator.
func genCase(seed int64, nodes, n int, pol, relax, flags uint8) (placement.Snapshot, placement.Request) {
	r := rand.New(rand.NewPCG(uint64(seed), 99))
	snap := synth.Cluster(synth.Config{
		Nodes: 1 + nodes%40, Switches: 1 + int(flags%4), Seed: seed,
		DeadFrac: 0.3 * float64(flags&1), GPUFrac: 0.5 * float64(flags>>1&1), Unmeasured: 0.3 * float64(flags>>2&1),
	})
	for i := range snap.Nodes {
		snap.Nodes[i].HeldSlots = r.IntN(3)
	}
	req := placement.Request{
		N: 1 + n%300, Policy: allPolicies[int(pol)%len(allPolicies)], Seed: seed,
		Oversubscribe: flags>>3&1 == 1, Force: flags>>4&1 == 1,
	}
	if flags>>5&1 == 1 {
		req.PPN = 1 + r.IntN(6)
	}
	if flags>>6&1 == 1 {
		req.PEs = []placement.PENeed{{Kind: "gpu", PerProc: r.IntN(2)}}
	}
	if m := relaxModes[int(relax)%len(relaxModes)]; m != "all" {
		req.Relax = m
		for range 1 + r.IntN(4) {
			h := snap.Nodes[r.IntN(len(snap.Nodes))]
			req.Hostfile = append(req.Hostfile, placement.HostSlots{Host: h.Name, Slots: 1 + r.IntN(6)})
		}
		if m == "none" || m == "loc" {
			req.N = 0
		}
		// Now and then a hostfile count far past any bound, as a hand-made API
		// request may carry: alone, or two of them whose sum wraps around.
		if flags>>7&1 == 1 && n%5 == 0 {
			req.Hostfile[0].Slots = math.MaxInt - r.IntN(3)
			if r.IntN(2) == 0 {
				req.Hostfile = append(req.Hostfile, placement.HostSlots{Host: req.Hostfile[0].Host, Slots: 1<<62 + r.IntN(4)})
			}
			req.N = 0
		}
	}
	req.MaxSteps = stepBound(len(snap.Nodes))
	return snap, req
}

// checkInvariants asserts what every decision promises. genCase gives every
// request the step budget stepBound allows, so a request that would make
// placement run (nearly) forever fails here with ErrStepBudget instead of
// hanging the fuzzer: placement of any request ends within bounded work.
func checkInvariants(t *testing.T, snap placement.Snapshot, req placement.Request) {
	t.Helper()
	d, err := placement.Place(snap, req)
	if err != nil {
		// the generator may name a dead or GPU-less host in a mode that keeps locations
		if errors.Is(err, placement.ErrDeadHost) || errors.Is(err, placement.ErrInvalidRequest) {
			return
		}
		t.Fatalf("unexpected error %v for %+v", err, req)
	}
	d2, _ := placement.Place(snap, req)
	if !reflect.DeepEqual(d, d2) {
		t.Fatalf("same input, different output:\n%+v\n%+v", d, d2)
	}
	if d.Wait {
		if d.WaitReason == "" || len(d.Hosts) != 0 {
			t.Fatalf("wait without reason or with hosts: %+v", d)
		}
		return
	}
	want := req.N
	if want == 0 {
		for _, h := range req.Hostfile {
			want += h.Slots
		}
	}
	byName := map[string]placement.Node{}
	for _, n := range snap.Nodes {
		byName[n.Name] = n
	}
	seen := map[string]bool{}
	got := 0
	for _, h := range d.Hosts {
		n := byName[h.Node]
		switch {
		case !n.Alive:
			t.Fatalf("dead node %s used: %+v", h.Node, req)
		case seen[h.Node]:
			t.Fatalf("two launch units on %s", h.Node)
		case h.NP <= 0:
			t.Fatalf("empty host %s", h.Node)
		case h.NP > placement.MaxProcs:
			t.Fatalf("%d processes on %s, more than raft accepts (%d): %+v", h.NP, h.Node, placement.MaxProcs, req.Hostfile)
		}
		seen[h.Node] = true
		for _, pe := range req.PEs {
			c := 0
			for _, p := range n.PEs {
				if p.Kind == pe.Kind {
					c += p.Count
				}
			}
			if c == 0 {
				t.Fatalf("GPU job on %s without a GPU", h.Node)
			}
		}
		got += h.NP
	}
	if got != want {
		t.Fatalf("placed %d, want %d (%s, relax %q): %v", got, want, req.Policy, req.Relax, d.Hosts)
	}
	if d.Degraded && !req.Oversubscribe {
		t.Fatalf("degraded without oversubscription")
	}
}

// TestPlace_Properties runs generated cases with a fixed seed.
func TestPlace_Properties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2024, 4))
	cases := 1500
	if testing.Short() {
		cases = 300
	}
	for range cases {
		snap, req := genCase(r.Int64N(1<<40), r.IntN(64), r.IntN(400), uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)))
		checkInvariants(t, snap, req)
	}
}

func FuzzPlace(f *testing.F) {
	f.Add(int64(1), 10, 16, uint8(0), uint8(0), uint8(0))
	f.Add(int64(7), 30, 200, uint8(1), uint8(3), uint8(0xff))
	f.Add(int64(3), 2, 5, uint8(4), uint8(2), uint8(0x41))
	f.Fuzz(func(t *testing.T, seed int64, nodes, n int, pol, relax, flags uint8) {
		if nodes < 0 || n < 0 {
			return
		}
		snap, req := genCase(seed, nodes, n, pol, relax, flags)
		checkInvariants(t, snap, req)
	})
}

// netload never does worse than the oracle allows and stays close to it.
func TestNetload_NearOracle(t *testing.T) {
	t.Parallel()
	sum, count := 0.0, 0
	for seed := range int64(30) {
		snap := synth.Cluster(synth.Config{Nodes: 14, Switches: 3 + int(seed%2), Seed: seed})
		req := placement.Request{N: 16 + int(seed%3)*16, Force: true, Oversubscribe: true}
		o, err := placement.Oracle(snap, req)
		if err != nil {
			t.Fatal(err)
		}
		d, err := placement.Place(snap, req)
		if err != nil {
			t.Fatal(err)
		}
		ratio := d.Score.T / o.Score.T
		if ratio < 1-1e-9 {
			t.Fatalf("seed %d: netload T %.6f below the oracle's %.6f", seed, d.Score.T, o.Score.T)
		}
		sum += ratio
		count++
	}
	if mean := sum / float64(count); mean > 1.05 {
		t.Fatalf("netload mean T/oracle = %.3f, want <= 1.05", mean)
	}
}
