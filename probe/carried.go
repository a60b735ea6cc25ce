package probe

import (
	"context"
	"fmt"
	"time"

	gnet "github.com/shirou/gopsutil/v3/net"
)

// Counters reads the interface byte counters of the caller's network
// namespace, loopback left out: bytes received and sent since the
// interfaces came up. A bandwidth test reads them around each half to
// learn what else its end's link carried meanwhile (BandwidthResult.Carried).
type Counters func() (rx, tx uint64, err error)

// ReadCounters is Counters from the kernel (/proc/net/dev through
// gopsutil), what the node-state sampler reads too.
func ReadCounters() (rx, tx uint64, err error) {
	return readNetBytes(context.Background())
}

func readNetBytes(ctx context.Context) (rx, tx uint64, err error) {
	counters, err := gnet.IOCountersWithContext(ctx, true)
	if err != nil {
		return 0, 0, fmt.Errorf("read network counters: %w", err)
	}
	rx, tx = sumNonLoopbackDir(counters, loopbackNames())
	return rx, tx, nil
}

// wireOverhead is what the counters see per byte of test payload at
// most: TCP/IP and Ethernet headers on every 1448-byte segment (4.6 %)
// and TLS records (0.2 %). Offloads that count one header per 64 KiB
// super-packet (veth, GSO) see less; taking the most understates the
// other traffic by up to 5 % of the test's rate, and too little given
// back is the safe side (leader/stamp.go).
const wireOverhead = 1.05

// halfCounter reads one direction of an end's counters around one half
// of a test: its own payload is taken off what crossed, the rest is the
// traffic the end carried besides the test.
type halfCounter struct {
	read   Counters
	rx     bool // which direction: received (the half's receiver) or sent
	before uint64
	start  time.Time
	ok     bool
}

func startHalf(c Counters, rx bool) halfCounter {
	h := halfCounter{read: c, rx: rx}
	if c == nil {
		return h
	}
	r, t, err := c()
	if err != nil {
		return h
	}
	h.before, h.start, h.ok = pick(r, t, rx), time.Now(), true
	return h
}

func pick(rx, tx uint64, wantRx bool) uint64 {
	if wantRx {
		return rx
	}
	return tx
}

// carried ends the half: the half's rate plus the other traffic the end
// moved the same way over the half, Mbit/s; payload is the test bytes
// this end moved in it. 0 when the counters could not be read, went
// backwards (an interface went away), or the rate is not known.
func (h halfCounter) carried(rate float64, payload uint64) float64 {
	if !h.ok || !(rate > 0) {
		return 0
	}
	r, t, err := h.read()
	window := time.Since(h.start)
	after := pick(r, t, h.rx)
	if err != nil || after < h.before || window <= 0 {
		return 0
	}
	return rate + otherMbps(after-h.before, payload, window)
}

// otherMbps is the rate of the bytes that crossed besides payload's
// (with its headers, wireOverhead) over window, in Mbit/s; never below 0.
func otherMbps(crossed, payload uint64, window time.Duration) float64 {
	other := float64(crossed) - float64(payload)*wireOverhead
	if other <= 0 || window <= 0 {
		return 0
	}
	return other * 8 / window.Seconds() / 1e6
}
