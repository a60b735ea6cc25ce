package main

import (
	"os/exec"
	"slices"
	"strings"
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

// A head node with a hog cgroup runs mpirun through the launcher, every
// word quoted for its shell; any other head runs it as it is.
func TestHeadConfined(t *testing.T) {
	t.Parallel()
	argv := []string{"mpirun", "--host", "n01:1,n05:1", "sh", "-c", "echo it's"}
	if got := headConfined(argv, "/lab/rsh", "n01", ""); !slices.Equal(got, argv) {
		t.Fatalf("no cgroup: %q, want argv as it is", got)
	}
	got := headConfined(argv, "/lab/rsh", "n01", "/sys/fs/cgroup/cpu/lab/n01/cgroup.procs")
	want := []string{"/lab/rsh", "n01", "'mpirun'", "'--host'", "'n01:1,n05:1'", "'sh'", "'-c'", `'echo it'\''s'`}
	if !slices.Equal(got, want) {
		t.Fatalf("hog head: %q, want %q", got, want)
	}
	// What the launcher's sh -c "$*" makes of it: the words as they were.
	out, err := exec.Command("sh", "-c", `printf '%s|' `+strings.Join(got[2:], " ")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != strings.Join(argv, "|")+"|" {
		t.Fatalf("the launcher's shell reads %q, want %q", out, strings.Join(argv, "|")+"|")
	}
}
