package probe

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestOtherMbps: the test's own payload, with its headers, is not
// traffic besides it; what crossed beyond that is, over the window.
func TestOtherMbps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name             string
		crossed, payload uint64
		window           time.Duration
		want             float64
	}{
		{"a quiet end: the payload and its headers", 2_090_000, 2_000_000, time.Second, 0},
		{"a flow of 6.25 MB/s besides", 2_100_000 + 6_250_000, 2_000_000, time.Second, 50},
		{"half a second", 2_100_000 + 3_125_000, 2_000_000, 500 * time.Millisecond, 50},
		{"fewer bytes than the payload", 1_000, 2_000_000, time.Second, 0},
		{"no window", 9_000_000, 0, 0, 0},
	} {
		if got := otherMbps(c.crossed, c.payload, c.window); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: otherMbps = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestHalfCounter_Carried: a half reads its own direction only; counters
// that fail or go backwards (an interface gone) give 0, not a figure.
func TestHalfCounter_Carried(t *testing.T) {
	t.Parallel()
	script := func(readings ...[2]uint64) Counters {
		i := 0
		return func() (rx, tx uint64, err error) {
			if i >= len(readings) {
				return 0, 0, errors.New("no more readings")
			}
			r := readings[i]
			i++
			return r[0], r[1], nil
		}
	}
	// 2 MB of test payload sent; 100 GB more sent meanwhile, which at
	// any window of a test is far above the rate: carried > rate.
	h := startHalf(script([2]uint64{7, 1000}, [2]uint64{7, 1000 + 2_100_000 + 100_000_000_000}), false)
	if got := h.carried(40, 2_000_000); !(got > 40) {
		t.Errorf("sender with traffic besides the test: carried %v, want above the rate 40", got)
	}
	// The receive side moved nothing besides the payload; the sent side
	// did, but a receiving half does not look at it.
	h = startHalf(script([2]uint64{1000, 0}, [2]uint64{1000 + 2_000_000, 1 << 40}), true)
	if got := h.carried(40, 2_000_000); got != 40 {
		t.Errorf("receiver with only the test: carried %v, want the rate 40", got)
	}
	h = startHalf(script([2]uint64{0, 5000}, [2]uint64{0, 10}), false)
	if got := h.carried(40, 2_000_000); got != 0 {
		t.Errorf("counters went backwards: carried %v, want 0", got)
	}
	h = startHalf(script([2]uint64{0, 5000}), false)
	if got := h.carried(40, 2_000_000); got != 0 {
		t.Errorf("second reading failed: carried %v, want 0", got)
	}
	if got := startHalf(nil, false).carried(40, 1); got != 0 {
		t.Errorf("no counters: carried %v, want 0", got)
	}
	if got := startHalf(script([2]uint64{0, 0}, [2]uint64{0, 1 << 30}), false).carried(0, 1); got != 0 {
		t.Errorf("no rate: carried %v, want 0", got)
	}
}
