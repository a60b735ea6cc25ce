package probe

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
)

// BenchmarkProbeTraffic prints, for 8, 32 and 128 nodes under the default
// budget (1 GiB/h per node, 4 MiB tests, a cycle every 5 min), the probe
// traffic per node per hour and the time a full cycle takes as the agent
// runs it: rounds are time slots of --bandwidth-timeout (5s) plus 1s of
// slack, and at 1 Gbit/s a test needs 34 ms of its slot. Latency pings
// (3 × 35-byte UDP echoes and answers to every peer a minute) are added.
//
//	go test -run '^$' -bench ProbeTraffic -benchtime 1x ./probe/
func BenchmarkProbeTraffic(b *testing.B) {
	cfg := probeplan.DefaultBudgetConfig()
	const slot = 6 * time.Second
	for b.Loop() {
	}
	fmt.Println("nodes  tests/node/cycle  rounds  bw MiB/node/h (max)  ping KiB/node/h  cycle (slotted)  busy time @1Gbit/s  all pairs after")
	for _, n := range []int{8, 32, 128} {
		tr := probeplan.TrafficPerHour(n, cfg)
		ping := float64((n-1)*3*2*2*(echoLen+28)*60) / 1024 // sent+received, request+answer, with IP/UDP headers
		fmt.Printf("%5d  %16d  %6d  %19d  %15.0f  %15s  %18s  %15s\n", n, tr.TestsPerNode, tr.Rounds,
			tr.MaxBytesPerNodeHour>>20, ping, time.Duration(tr.Rounds)*slot,
			tr.CycleTime(cfg, 1e9, 5*time.Millisecond).Round(time.Millisecond), tr.CoverTime)
	}
}
