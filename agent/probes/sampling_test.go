package probes

import (
	"math"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/probe"
)

// TestSamplesLeaveOutTestBytes: the bytes a node's bandwidth tests moved
// (testBytes, from both the client's results and the server's) reach the
// Tracker with the next raw sample, and the published traffic is what
// else crossed the interface.
func TestSamplesLeaveOutTestBytes(t *testing.T) {
	t.Parallel()
	var got nodestate.Dynamic
	s := newSamples(func(d nodestate.Dynamic) { got = d })
	t0 := time.Unix(1000, 0)
	s.ingest(probe.RawSample{At: t0})
	s.testBytes(1<<20, 2<<20) // as a server: 1 MiB in, 2 MiB back out
	const other = 3_000_000   // bytes of everything else in each direction
	s.ingest(probe.RawSample{At: t0.Add(3 * time.Second), RxBytes: other + 1<<20, TxBytes: other + 2<<20, NetBytes: 2*other + 3<<20})
	if math.Abs(got.NetRx-other/3) > 1e-6 || math.Abs(got.NetTx-other/3) > 1e-6 {
		t.Fatalf("rx %v tx %v bytes/s, want %v each: the test's bytes are not traffic", got.NetRx, got.NetTx, other/3)
	}
}
