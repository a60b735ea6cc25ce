package agent

import (
	"reflect"
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

func TestInventoryAddsSwitchAndSortedFeatures(t *testing.T) {
	t.Parallel()
	scanned := nodestate.Static{Hostname: "n1", Cores: 4, Threads: 8, PEs: []nodestate.PE{{Kind: "cpu", Count: 8}}}
	got := inventory(scanned, "sw1", []string{"ib", "avx512", "ib"})
	want := scanned
	want.PEs = []nodestate.PE{{Kind: "cpu", Count: 8}}
	want.Switch, want.Features = "sw1", []string{"avx512", "ib"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("inventory = %+v, want %+v", got, want)
	}
	// The gossiped state owns its PEs: the scan's may change under it.
	got.PEs[0].Count = 99
	if scanned.PEs[0].Count != 8 {
		t.Fatal("inventory shares its PEs with the scan")
	}
}

func TestGossipedRoundsTraffic(t *testing.T) {
	t.Parallel()
	d := nodestate.Dynamic{NetRxBytesPerSec: 1234.5, NetTxBytesPerSec: 99.4, Load: nodestate.Means{Now: 0.25}, SampledAt: 7}
	got := gossiped(d)
	if got.NetRxBytesPerSec != 1235 || got.NetTxBytesPerSec != 99 || got.Load != d.Load || got.SampledAt != 7 {
		t.Fatalf("gossiped(%+v) = %+v, want traffic rounded to the byte and the rest as it was", d, got)
	}
}
