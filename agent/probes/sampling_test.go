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
	if math.Abs(got.NetRxBytesPerSec-other/3) > 1e-6 || math.Abs(got.NetTxBytesPerSec-other/3) > 1e-6 {
		t.Fatalf("rx %v tx %v bytes/s, want %v each: the test's bytes are not traffic", got.NetRxBytesPerSec, got.NetTxBytesPerSec, other/3)
	}
}

// TestSamplesKeepTheIntervalWhileATestRuns: a running test's bytes are on
// the counters a shift's recent rates come from and are not yet counted
// as a test's, so while one runs the sample publishes its interval's
// rates, not the recent ones (which would be mostly the test), and says
// they cover the interval; with no test it publishes the recent rates
// and the watch reading's window.
func TestSamplesKeepTheIntervalWhileATestRuns(t *testing.T) {
	t.Parallel()
	var got nodestate.Dynamic
	s := newSamples(func(d nodestate.Dynamic) { got = d })
	running := false
	s.inTest = func() bool { return running }
	t0 := time.Unix(1000, 0)
	s.ingest(probe.RawSample{At: t0})
	shift := probe.RawSample{At: t0.Add(3 * time.Second), RxBytes: 3_000_000, TxBytes: 3_000_000, NetBytes: 6_000_000,
		RecentRx: 9_000_000, RecentTx: 9_000_000, RecentSpan: 200 * time.Millisecond}
	running = true
	s.ingest(shift)
	if got.NetRxBytesPerSec != 1_000_000 || got.NetTxBytesPerSec != 1_000_000 || got.NetWindowMs != 3000 {
		t.Fatalf("while a test runs: rx %v tx %v bytes/s over %d ms, want the interval's 1e6 each over 3000 ms, not the recent 9e6",
			got.NetRxBytesPerSec, got.NetTxBytesPerSec, got.NetWindowMs)
	}
	running = false
	shift.At, shift.RxBytes, shift.TxBytes, shift.NetBytes = t0.Add(6*time.Second), 6_000_000, 6_000_000, 12_000_000
	s.ingest(shift)
	if got.NetRxBytesPerSec != 9_000_000 || got.NetWindowMs != 200 {
		t.Fatalf("with no test running: rx %v bytes/s over %d ms, want the recent 9e6 over the reading's 200 ms", got.NetRxBytesPerSec, got.NetWindowMs)
	}
}
