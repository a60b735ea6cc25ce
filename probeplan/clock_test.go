package probeplan

import "time"

// t0 is the fixed start of the tests' clocks: plans are pure functions of
// the time they are given.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
