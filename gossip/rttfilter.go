package gossip

import (
	"slices"
	"sync"
	"time"
)

// rttFilter keeps the last few RTTs memberlist measured to each peer and
// gives their minimum (Config.CoordinateMinOf; off at 1). A memberlist
// ping is one packet each way through two busy agents: on a loaded host
// the agents' scheduling adds milliseconds to a 0.1 ms LAN round trip
// (on the namespace testbed the raw estimates were 6–8× the direct
// pings, 2.7–3.2× with the minimum of 8). The minimum also drops the
// queueing delay of a congested link, which a job would see, so it is
// not the default (docs/design/network-model.md).
type rttFilter struct {
	mu   sync.Mutex
	size int
	rtts map[string][]time.Duration
}

func newRTTFilter(size int) *rttFilter {
	return &rttFilter{size: size, rtts: map[string][]time.Duration{}}
}

// add records one RTT to peer and returns the minimum of the window.
func (f *rttFilter) add(peer string, rtt time.Duration) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := append(f.rtts[peer], rtt)
	if len(w) > f.size {
		w = w[len(w)-f.size:]
	}
	f.rtts[peer] = w
	return slices.Min(w)
}

func (f *rttFilter) forget(peer string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.rtts, peer)
}
