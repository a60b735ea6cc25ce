package placement_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

var (
	benchMu    sync.Mutex
	benchSnaps = map[int]placement.Snapshot{}
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
