package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// The explain line lists each pair's offer, "?" for an unmeasured pair.
func TestPairOffers(t *testing.T) {
	t.Parallel()
	s := api.AllocScore{PairScores: []api.AllocPairScore{
		{A: "n01", B: "n02", OfferMbps: 99.6, Measured: true, Cost: 0.01},
		{A: "n01", B: "n05", Cost: 9},
	}}
	if got, want := pairOffers(s), "n01-n02=100(0.01) n01-n05=?(9.00)"; got != want {
		t.Fatalf("pairOffers = %q, want %q", got, want)
	}
}

// The explain line says how long before the placement the previous run
// ended and which of the oracle's nodes it held.
func TestPredecessor(t *testing.T) {
	t.Parallel()
	var cs caseRun
	asked := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if got, want := cs.predecessor([]string{"n05", "n06"}, asked), "no run before this placement"; got != want {
		t.Fatalf("before any run: %q, want %q", got, want)
	}
	cs.lastRun, cs.lastPolicy, cs.lastHosts = asked.Add(-80*time.Millisecond), "random", []string{"n03", "n05", "n06", "n05"}
	want := "the previous run (random on n03,n05,n06,n05) ended 0.08s before the placement was asked, on the oracle's n05,n06"
	if got := cs.predecessor([]string{"n05", "n06", "n07", "n08"}, asked); got != want {
		t.Fatalf("predecessor = %q, want %q", got, want)
	}
	if got := cs.predecessor([]string{"n09", "n10"}, asked); !strings.HasSuffix(got, "on none of the oracle's nodes") {
		t.Fatalf("predecessor on other nodes = %q", got)
	}
}
