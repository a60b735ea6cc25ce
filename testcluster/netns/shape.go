package netns

import (
	"context"
	"fmt"
	"strconv"
)

// tbfArgs returns the tc arguments that cap dev's egress at mbit Mbit/s.
//
// The bucket holds at least 64 KiB so a full GSO super-packet (veths
// aggregate up to 64 KiB) passes without being split, and about 2 ms at the
// rate for faster links; a queue of ~20 ms keeps TCP busy without large
// standing delays.
func tbfArgs(ns, dev string, mbit int) []string {
	bytesPerSec := mbit * 1_000_000 / 8
	burst := max(bytesPerSec/500, 64<<10)
	limit := bytesPerSec/50 + burst
	return []string{"-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf",
		"rate", strconv.Itoa(mbit) + "mbit",
		"burst", strconv.Itoa(burst),
		"limit", strconv.Itoa(limit)}
}

// shape caps the egress of dev in namespace ns (mbit 0: leave unshaped).
func shape(ctx context.Context, ns, dev string, mbit int) error {
	if mbit == 0 {
		return nil
	}
	if _, err := run(ctx, "tc", tbfArgs(ns, dev, mbit)...); err != nil {
		return fmt.Errorf("shape %s/%s to %d mbit: %w", ns, dev, mbit, err)
	}
	return nil
}
