package main

import (
	"testing"

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
