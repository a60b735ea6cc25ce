package placement_test

import (
	"errors"
	"math"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
)

// POST /v1/alloc with a huge hostfile slot count would spin a core for
// good if n were bounded before it is filled in from the hostfile (the
// round robin would run 2^62 times); counts whose sum wraps around to the
// requested n would pass placement and be refused by raft every round.
// Each request below must end at once, and with an error saying what is wrong.
func TestPlace_HugeHostfileCountsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	huge := 1 << 62
	for name, req := range map[string]placement.Request{
		"dist, n from a huge hostfile":      {Relax: "dist", Hostfile: []placement.HostSlots{{Host: "a", Slots: huge}}},
		"loc+dist, n from a huge hostfile":  {Relax: "loc+dist", Hostfile: []placement.HostSlots{{Host: "a", Slots: huge}, {Host: "b", Slots: 2}}},
		"none, counts wrap around to n = 1": {N: 1, Hostfile: []placement.HostSlots{{Host: "a", Slots: math.MaxInt}, {Host: "b", Slots: math.MaxInt}, {Host: "c", Slots: 3}}},
		"none, counts wrap, n from them":    {Hostfile: []placement.HostSlots{{Host: "a", Slots: math.MaxInt}, {Host: "b", Slots: math.MaxInt}, {Host: "c", Slots: 3}}},
		"loc, one count over the bound":     {Relax: "loc", Hostfile: []placement.HostSlots{{Host: "a", Slots: placement.MaxProcs + 1}}},
		"dist, sum over the bound":          {Relax: "dist", Hostfile: []placement.HostSlots{{Host: "a", Slots: placement.MaxProcs}, {Host: "b", Slots: 1}}},
	} {
		for _, pol := range allPolicies {
			req.Policy, req.Oversubscribe, req.Force = pol, true, true
			req.MaxSteps = stepBound(4) // the old code spun here; with a budget it reports it
			d, err := placement.Place(fourNodes(), req)
			if !errors.Is(err, placement.ErrInvalidRequest) {
				t.Errorf("%s (%s): got %+v, %v; want ErrInvalidRequest", name, pol, d.Hosts, err)
			}
		}
	}
	// At the bound itself the hostfile is fine.
	req := placement.Request{Relax: "dist", Oversubscribe: true, Force: true,
		Hostfile: []placement.HostSlots{{Host: "a", Slots: placement.MaxProcs - 1}, {Host: "b", Slots: 1}}}
	d, err := placement.Place(fourNodes(), req)
	if err != nil || len(d.Hosts) != 2 {
		t.Fatalf("hostfile at the bound: %+v, %v", d.Hosts, err)
	}
}

// A placement stops when the caller gives up (the API's request context) or
// when it has spent its step budget, and says which.
func TestPlace_DoneAndStepBudgetStopIt(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	close(done)
	for _, pol := range allPolicies {
		req := placement.Request{N: placement.MaxProcs, Policy: pol, Oversubscribe: true, Force: true, Done: done}
		if _, err := placement.Place(fourNodes(), req); !errors.Is(err, placement.ErrCanceled) {
			t.Errorf("%s with Done closed: %v, want ErrCanceled", pol, err)
		}
		// Spreading over a hostfile's nodes fills one process at a time.
		req.Done, req.MaxSteps, req.Relax = nil, 1000, "dist"
		req.Hostfile = []placement.HostSlots{{Host: "a", Slots: 1}, {Host: "b", Slots: 1}}
		if _, err := placement.Place(fourNodes(), req); !errors.Is(err, placement.ErrStepBudget) {
			t.Errorf("%s with 1000 steps for %d processes: %v, want ErrStepBudget", pol, req.N, err)
		}
		req.MaxSteps = stepBound(4)
		if d, err := placement.Place(fourNodes(), req); err != nil || len(d.Hosts) != 2 {
			t.Errorf("%s within the bound: %+v, %v", pol, d.Hosts, err)
		}
	}
}

// stepBound is the work any valid request may take on a snapshot of the
// given size: every process filled once (n <= MaxProcs), a bounded number of
// passes over the nodes per candidate start, the oracle's subsets.
func stepBound(nodes int) int {
	return 4*placement.MaxProcs + 64*nodes*nodes + 1<<placement.OracleMaxNodes
}
