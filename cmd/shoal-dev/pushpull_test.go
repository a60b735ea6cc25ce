package main

import (
	"testing"

	"github.com/shoal-hpc/shoal/nodestate"
)

// TestPushPullSizes prints the push/pull payload at 100, 300 and 1,000
// nodes as gossip sends it now (states without rows) and as it was while
// states carried every node's full row, and the heap of a server's row
// table: docs/design/scale.md's wall 1 figures. Push/pull must stay O(n), under
// 1 MiB at 1,000 nodes, or joins and anti-entropy grow with the square of the cluster.
func TestPushPullSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 1,000 full rows (10^6 cells)")
	}
	for _, n := range []int{100, 300, 1000} {
		plain, withRows, rowHeap, err := pushPullSizes(n)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("n=%5d  push/pull %8d B (%.1f KiB, %d B/state)  with rows (before) %10d B (%.1f MiB)  row table/server %.1f MiB  decoder cap %d MiB",
			n, plain, float64(plain)/1024, plain/n, withRows, float64(withRows)/(1<<20), rowHeap/(1<<20), nodestate.MaxMessageSize>>20)
		if n == 1000 && plain >= 1<<20 {
			t.Errorf("push/pull of %d states is %d bytes, want under 1 MiB", n, plain)
		}
		if plain > n*1000 {
			t.Errorf("push/pull of %d states is %d bytes: more than 1,000 B a state", n, plain)
		}
	}
}
