package main

import (
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/agent/api"
)

func TestRTTReport(t *testing.T) {
	t.Parallel()
	pairs := []api.NetPair{
		{From: "a", To: "b", RTTEstms: f(0.512), RTTms: f(0.48)},
		{From: "b", To: "a", RTTEstms: f(0.512), RTTms: f(0.9)},
		{From: "a", To: "c", RTTEstms: f(1.25)},
		{From: "c", To: "d", RTTms: f(0.3)},
	}
	got, err := rttReport(pairs, "a", "b")
	want := "Estimated a <-> b rtt: 0.512 ms (using network coordinates)\n" +
		"Measured  a <-> b rtt: 0.480 ms (1-minute mean of direct pings)\n"
	if err != nil || got != want {
		t.Fatalf("a b: %v\n%q\nwant\n%q", err, got, want)
	}
	if got, err := rttReport(pairs, "c", "a"); err != nil || got != "Estimated c <-> a rtt: 1.250 ms (using network coordinates)\n" {
		t.Fatalf("c a: %v %q", err, got)
	}
	if _, err := rttReport(pairs, "c", "d"); err == nil || !strings.Contains(err.Error(), "no coordinate estimate for c <-> d") {
		t.Fatalf("c d without coordinates: err = %v", err)
	}
}
