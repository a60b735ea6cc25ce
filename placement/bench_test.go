package placement_test

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

var (
	benchMu    sync.Mutex
	benchSnaps = map[int]placement.Snapshot{}
	derivSnaps = map[[2]int]placement.Snapshot{}
)

// benchSnapshot: up to 1,000 nodes every pair is measured both ways (999,000
// links at 1,000); at 10,000 each node has 16 random peers and its two switch
// neighbours measured, as a probe schedule at that scale would give.
func benchSnapshot(nodes int) placement.Snapshot {
	benchMu.Lock()
	defer benchMu.Unlock()
	if s, ok := benchSnaps[nodes]; ok {
		return s
	}
	c := synth.Config{Nodes: nodes, Switches: 4, Seed: 42}
	if nodes > 1000 {
		c.PeerLinks = 16
	}
	s := synth.Cluster(c)
	benchSnaps[nodes] = s
	return s
}

func BenchmarkPlace(b *testing.B) {
	for _, nodes := range []int{64, 256, 1000, 10000} {
		for _, n := range []int{64, 512} {
			for _, pol := range []string{"paper", "netload"} {
				b.Run(fmt.Sprintf("nodes=%d/n=%d/%s", nodes, n, pol), func(b *testing.B) {
					snap := benchSnapshot(nodes)
					req := placement.Request{N: n, Policy: pol, Oversubscribe: true, Force: true}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if _, err := placement.Place(snap, req); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// derivedSnapshot is a cluster under the network model's O(n + s²) probes
// (synth.Config.Derived): few direct tests, directional, with Vivaldi RTTs
// and traffic; a derived link for every other pair (~500,000 at 1,000
// nodes), as Links or, as the leader hands them over, as the network
// model's tables (model). 32 nodes per switch.
func derivedSnapshot(nodes int, model bool) placement.Snapshot {
	benchMu.Lock()
	defer benchMu.Unlock()
	key := [2]int{nodes, 0}
	if model {
		key[1] = 1
	}
	if s, ok := derivSnaps[key]; ok {
		return s
	}
	s := synth.Cluster(synth.Config{Nodes: nodes, Switches: max(4, nodes/32), Seed: 42, Derived: true, Model: model})
	derivSnaps[key] = s
	return s
}

// cpuTime is the process's user + system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPlaceDerived times netload on the leader's shape of a large
// cluster (derivedSnapshot), the derived links as Links and as the model,
// reporting CPU time per placement besides the wall time (the host is
// shared; CPU counts GC on every thread):
//
//	go test -run XXX -bench PlaceDerived -benchtime 20x -count 5 ./placement/
func BenchmarkPlaceDerived(b *testing.B) {
	for _, nodes := range []int{64, 1000} {
		for _, n := range []int{64, 512} {
			for _, form := range []string{"links", "model"} {
				b.Run(fmt.Sprintf("nodes=%d/n=%d/%s", nodes, n, form), func(b *testing.B) {
					snap := derivedSnapshot(nodes, form == "model")
					req := placement.Request{N: n, Policy: "netload", Oversubscribe: true, Force: true}
					b.ReportAllocs()
					b.ResetTimer()
					c0 := cpuTime()
					for b.Loop() {
						if _, err := placement.Place(snap, req); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}
