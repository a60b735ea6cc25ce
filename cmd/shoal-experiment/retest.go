package main

import (
	"math"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/probes"
)

// The network model's freshness contract gives a capacity change one bandwidth
// cycle: a placement made after a scheduled change but before any test
// involving the changed node has re-measured it cannot know of the
// change. The runs after a change are therefore split at the first
// re-test: the moment the asking agent's view (its `shoal net --json`,
// which reads the same server table its `shoal alloc` places on) first
// holds a bandwidth figure for a pair involving the changed node that
// was measured after the change was applied.

// Values of runRec.Retest: on which side of the first re-test of its
// phase's change a run was placed. "" is unknown: a run of the cold start
// or of phase 0, a CSV written before the column, or a placement during
// which the re-test arrived.
const (
	retestBefore = "before"
	retestAfter  = "after"
)

// retestGuard is how long after a change a test must have ended to count
// as a re-test: a figure is stamped with the end of its transfer
// (probe.BandwidthResult.At), and a transfer that began before the change
// measured partly the old rate. No test outlasts the agents' bandwidth
// timeout and the probe server's second of grace past it, whatever
// --bandwidth-bytes and the new rate are (the review found a fixed 2 s,
// sized for 1 MiB at 10 Mbit/s); -agent-args that raise
// --bandwidth-timeout above the default would need it raised too.
var retestGuard = probes.DefaultConfig().BandwidthTimeout + time.Second

// retestWatch follows, during one phase, the asking agent's view of the
// phase's changed node. Times are seconds after the start of the
// steady-state runs.
type retestWatch struct {
	node      string
	changedAt time.Time // when SetNodeRates returned: the change is in place
	changedS  float64
	// lastMissS is when the latest poll whose answer held no re-test was
	// sent (the view lacked it then and before); -Inf before any.
	lastMissS float64
	// seenS is when the first poll whose answer held one came back (the
	// view held it by then); +Inf until then.
	seenS float64
	// pair is the re-test seen: its ends, its figure and, in
	// MeasuredAt, when it ended.
	pair api.NetPair
}

func newRetestWatch(node string, changedAt time.Time, changedS float64) *retestWatch {
	return &retestWatch{node: node, changedAt: changedAt, changedS: changedS, lastMissS: math.Inf(-1), seenS: math.Inf(1)}
}

func (w *retestWatch) seen() bool { return !math.IsInf(w.seenS, 1) }

// observe records one poll of the view, sent at sentS and answered at
// gotS, and reports whether it is the one that first saw a re-test.
func (w *retestWatch) observe(ps []api.NetPair, sentS, gotS float64) bool {
	if w.seen() {
		return false
	}
	p, ok := firstRetest(ps, w.node, w.changedAt.Add(retestGuard))
	if !ok {
		w.lastMissS = max(w.lastMissS, sentS)
		return false
	}
	w.seenS, w.pair = gotS, p
	return true
}

// firstRetest is the earliest bandwidth figure in a `shoal net --json`
// answer of a pair involving node that was measured after after; false
// when there is none. On the testbed every agent shares the host's
// clock, so measured_at (the measuring node's clock) compares with the
// experiment's.
func firstRetest(ps []api.NetPair, node string, after time.Time) (api.NetPair, bool) {
	var best api.NetPair
	found := false
	for _, p := range ps {
		if (p.From != node && p.To != node) || p.BWMbps == nil || !p.MeasuredAt.After(after) {
			continue
		}
		if !found || p.MeasuredAt.Before(best.MeasuredAt) {
			best, found = p, true
		}
	}
	return best, found
}

// retestPeer is the other end of the re-test's pair.
func (w *retestWatch) retestPeer() string {
	if w.pair.From == w.node {
		return w.pair.To
	}
	return w.pair.From
}

// retestSide is the side of the first re-test a placement asked at
// askedS and answered at answeredS falls on, given the watch's bounds:
// before when a poll sent after the answer still saw none (the view is
// monotone: a figure once there is replaced only by a later one), after
// when a poll answered before the ask had seen it, "" when the re-test
// arrived while the placement was asked (or no poll told either way).
func retestSide(askedS, answeredS, lastMissS, seenS float64) string {
	switch {
	case answeredS <= lastMissS:
		return retestBefore
	case askedS >= seenS:
		return retestAfter
	}
	return ""
}
