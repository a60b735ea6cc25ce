package probeplan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// LinkCheckConfig tunes the link check: a short two-way test each node
// runs every Interval to one quiet peer, so that a link whose rate
// changed between two bandwidth cycles is noticed within seconds, not at
// the next cycle (BudgetConfig.CycleInterval, 5 minutes by default).
// Only a change by more than a factor (Slower, Faster) counts: a check
// is a small test, read against the pair's latest full test.
type LinkCheckConfig struct {
	// Interval is how often a node checks its link; 0 turns the check
	// off. Default 10s (--link-check-interval).
	Interval time.Duration
	// Bytes is the size of one check, both directions together (half
	// each way). It must exceed a token bucket's burst several times over,
	// or a shaped link reads as fast as its line: a Linux tbf lets its
	// burst (64 KiB on the testbed, often rate/HZ elsewhere) through at
	// once. Default 512 KiB (--link-check-bytes): 256 KiB each way, a
	// reading at most a third above the shaped rate; 21 ms at 100 Mbit/s,
	// 0.2 s at 10 Mbit/s.
	Bytes uint64
	// Slower and Faster are how far below (a share, under 1) or above (a
	// factor, over 1) the pair's latest test a check must read to
	// disagree with it. Defaults 0.5 and 2: wider than a check's own
	// error (its burst, a small sample), narrower than the changes that
	// reorder placement's groups (a 100 Mbit/s link at 10).
	Slower, Faster float64
	// Confirm is how many checks in a row, each with a different peer,
	// must disagree the same way before the node reports a change: one
	// slow peer, or a peer whose own traffic the checker cannot see,
	// moves one check only. Default 2.
	Confirm int
}

// DefaultLinkCheckConfig returns the defaults documented on LinkCheckConfig.
func DefaultLinkCheckConfig() LinkCheckConfig {
	return LinkCheckConfig{Interval: 10 * time.Second, Bytes: 512 << 10, Slower: 0.5, Faster: 2, Confirm: 2}
}

// Bounds checked by LinkCheckConfig.Validate.
const (
	minCheckInterval = time.Second
	maxCheckBytes    = 64 << 20
)

// Validate reports the first field out of bounds. A zero Interval (the
// check off) leaves the other fields unchecked.
func (c LinkCheckConfig) Validate() error {
	switch {
	case c.Interval == 0:
		return nil
	case c.Interval < minCheckInterval:
		return fmt.Errorf("link check interval %s is below %s; use 0 to turn the check off", c.Interval, minCheckInterval)
	case c.Bytes < minTestBytes || c.Bytes > maxCheckBytes:
		return fmt.Errorf("link check bytes %d is outside %d..%d", c.Bytes, minTestBytes, maxCheckBytes)
	case !(c.Slower > 0 && c.Slower < 1):
		return fmt.Errorf("link check slower share %g is outside (0, 1)", c.Slower)
	case !(c.Faster > 1):
		return fmt.Errorf("link check faster factor %g is not above 1", c.Faster)
	case c.Confirm < 1:
		return fmt.Errorf("link check confirm %d is below 1", c.Confirm)
	}
	return nil
}

// BytesPerHour is what the checks cost one node per hour, sent plus
// received: its own checks, and on average as many from others that
// pick it as their peer. 0 when the check is off.
func (c LinkCheckConfig) BytesPerHour() uint64 {
	if c.Interval <= 0 {
		return 0
	}
	return 2 * c.Bytes * uint64(time.Hour/c.Interval)
}

// FitTo is c as it runs under probe budget b (whose CheckBytesPerHour is
// ignored): the checks take at most half of b's bytes per hour, and never
// what the cycles need for one test per node per cycle, so a small budget
// stretches their interval rather than refusing the configuration. Checks
// stretched to a cycle or longer are off (Interval 0): the cycle itself
// tests the link as often. No cap (BytesPerHour 0) leaves c as it is.
func (c LinkCheckConfig) FitTo(b BudgetConfig) LinkCheckConfig {
	if c.Interval <= 0 || b.BytesPerHour == 0 || c.Bytes == 0 {
		return c
	}
	b.CheckBytesPerHour = 0
	share := b.BytesPerHour / 2
	if need := b.minBytesPerHour(); b.BytesPerHour < need+share {
		share = b.BytesPerHour - min(need, b.BytesPerHour)
	}
	if c.BytesPerHour() <= share {
		return c
	}
	if share == 0 {
		c.Interval = 0
		return c
	}
	// 2×Bytes an interval (its own checks and a peer's) within share an hour.
	iv := time.Duration(math.Ceil(float64(2*c.Bytes) / float64(share) * float64(time.Hour)))
	if b.CycleInterval > 0 && iv >= b.CycleInterval {
		c.Interval = 0
		return c
	}
	c.Interval = max(c.Interval, iv)
	return c
}

// checkJitter is how far, as a share of Interval, a check's time is
// drawn either side of it (NextCheckIn).
const checkJitter = 0.5

// NextCheckIn is how long a node waits before its next check: Interval
// times a factor drawn from r uniformly in [1-checkJitter, 1+checkJitter),
// so the checks come every Interval on average and the budget holds.
// Fixed intervals lock the nodes' checks in phase: agents started together
// fire within milliseconds of each other for as long as they run, and the
// rotation (every node starts at the first peer by name once the first
// cycle gave figures) sends several at one peer, whose probe server takes
// one test at a time and refuses the others. Which node loses stays the
// same tick after tick, so a node could reach one peer only, never the
// Confirm peers a change needs (on the four-node testbed, a link at a
// tenth went unreported for minutes). Drawn times fall out of phase.
// 0 when the check is off.
func (c LinkCheckConfig) NextCheckIn(r *rand.Rand) time.Duration {
	if c.Interval <= 0 {
		return 0
	}
	f := 1 - checkJitter + 2*checkJitter*r.Float64()
	return time.Duration(f * float64(c.Interval))
}

// LinkCheck is one check of a node's link against one peer, next to the
// figure the pair's latest full test gave (the node's row, what the
// network model and placement read).
type LinkCheck struct {
	Peer string
	// At is when the check ended.
	At time.Time
	// OutMbps and InMbps are the check's rates, to the peer and back,
	// each lifted to what this node's link carried that way meanwhile when
	// that was more (a job's traffic beside the check shares the link; a
	// slow link carries little in all); 0 when not measured.
	OutMbps, InMbps float64
	// RowOutMbps and RowInMbps are the pair's latest full test each way
	// when the check ran; 0 when that way was never tested.
	RowOutMbps, RowInMbps float64
	// RowAt is when the figures the check is read against were measured:
	// the older of the two ways' latest tests (zero: not known). A check
	// that agrees with a pair tested again after its node's link was seen
	// to change says nothing of the link going back (JudgeLink).
	RowAt time.Time
}

// LinkChange says which way a node's link moved away from the model.
type LinkChange string

// The changes JudgeLink reports; "" is none.
const (
	LinkSlower LinkChange = "slower"
	LinkFaster LinkChange = "faster"
)

// LinkVerdict is a node's reading of its own link from its latest checks.
type LinkVerdict struct {
	// Change is "" while the checks agree with the model.
	Change LinkChange
	// Mbps is, for a slower link, the fastest of the confirming checks'
	// slower directions: what the link gave at best; for a faster one,
	// the slowest of their faster directions.
	Mbps float64
	// Since is the first confirming check's time: tests of the node's
	// pairs before it read the link as it was. At is the latest's.
	Since, At time.Time
}

// judge is how one check compares with its pair's figures: a direction
// below Slower times its figure makes the check slower; else one above
// Faster times it, faster. ok is false when no direction has both a
// reading and a figure.
func (c LinkCheck) judge(cfg LinkCheckConfig) (LinkChange, float64, bool) {
	ok := false
	var slow, fast float64
	for _, d := range [][2]float64{{c.OutMbps, c.RowOutMbps}, {c.InMbps, c.RowInMbps}} {
		got, want := d[0], d[1]
		if !(got > 0 && want > 0) {
			continue
		}
		ok = true
		switch {
		case got < cfg.Slower*want:
			slow = max(slow, got)
		case got > cfg.Faster*want:
			if fast == 0 {
				fast = got
			}
			fast = min(fast, got)
		}
	}
	switch {
	case slow > 0:
		return LinkSlower, slow, true
	case fast > 0:
		return LinkFaster, fast, true
	}
	return "", 0, ok
}

// JudgeLink reads a node's checks, oldest first, against its pairs'
// figures: the link changed when the newest checks, back to Confirm
// different peers, all disagree the same way, with no check agreeing in
// between. A check without a figure to compare with (a pair never
// tested) is passed over. Two checks of one peer count once: on a small
// cluster the same peer comes round again before Confirm others have.
//
// A check that agrees with a pair tested since the checks last agreed
// with the figures before the run of disagreeing checks is passed over
// too (retested): that test may already have read the changed link (the
// link changed somewhere between that agreeing check and the run's
// first), and a check agreeing with it says nothing of the link going
// back. Counted, it would withdraw the verdict as soon as the first of
// the node's pairs was tested again and checked, while its other pairs
// still stood at their figures from before the change, no longer capped,
// and placement would read the slow node as fast (the degrade10 case in
// docs/results.md). A link that comes back reads faster than the pairs tested while it was
// slow, and as fast as the pairs tested before, either of which ends the
// run.
func JudgeLink(checks []LinkCheck, cfg LinkCheckConfig) LinkVerdict {
	skip := retested(checks, cfg)
	var v LinkVerdict
	peers := map[string]bool{}
	for i := len(checks) - 1; i >= 0; i-- {
		c := checks[i]
		ch, mbps, ok := c.judge(cfg)
		if !ok || (skip != nil && skip[i]) {
			continue
		}
		if ch == "" || (v.Change != "" && ch != v.Change) {
			break
		}
		if v.Change == "" {
			v = LinkVerdict{Change: ch, Mbps: mbps, At: c.At}
		}
		if ch == LinkSlower {
			v.Mbps = max(v.Mbps, mbps)
		} else {
			v.Mbps = min(v.Mbps, mbps)
		}
		v.Since = c.At
		peers[c.Peer] = true
		if len(peers) >= max(cfg.Confirm, 1) {
			return v
		}
	}
	return LinkVerdict{}
}

// retested marks the agreeing checks JudgeLink passes over: those whose
// pair was tested (RowAt) after the latest counted agreeing check before
// the run of disagreeing checks (one way) they follow; with no such check
// among checks, after any time. nil when none is.
func retested(checks []LinkCheck, cfg LinkCheckConfig) []bool {
	var skip []bool
	var run LinkChange
	var agreed, bound time.Time // the latest counted agreeing check; the run's bound
	for i, c := range checks {
		ch, _, ok := c.judge(cfg)
		switch {
		case !ok:
		case ch != "" && ch == run:
		case ch != "":
			if run == "" {
				bound = agreed
			}
			run = ch
		case run != "" && !c.RowAt.IsZero() && c.RowAt.After(bound):
			if skip == nil {
				skip = make([]bool, len(checks))
			}
			skip[i] = true
		default:
			run, agreed = "", c.At
		}
	}
	return skip
}
