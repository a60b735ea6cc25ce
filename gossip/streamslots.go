package gossip

import (
	"sync"

	"github.com/shoal-hpc/shoal/internal/connlimit"
)

// streamSlots is the accounting of inbound gossip streams: how many are
// open in all and per source address, and how many bytes the open ones
// that have not yet delivered their first message may still make
// memberlist buffer. It does no I/O; the guard asks it and acts.
type streamSlots struct {
	conns      *connlimit.Slots
	maxPending int64

	mu      sync.Mutex
	pending int64
}

func newStreamSlots(maxOpen, maxPerSource int, maxPending int64) *streamSlots {
	return &streamSlots{conns: connlimit.NewSlots(maxOpen, maxPerSource), maxPending: maxPending}
}

// admit takes a slot for a new stream from src, or reports false when
// either the total or src's share is used up.
func (s *streamSlots) admit(src string) bool { return s.conns.Take(src) }

// leave gives back a slot taken by admit.
func (s *streamSlots) leave(src string) { s.conns.Give(src) }

// reserve books n bytes of unauthenticated buffering, or reports false
// when they would exceed the budget.
func (s *streamSlots) reserve(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || s.pending+n > s.maxPending {
		return false
	}
	s.pending += n
	return true
}

// unreserve gives back bytes booked by reserve.
func (s *streamSlots) unreserve(n int64) {
	s.mu.Lock()
	s.pending -= n
	s.mu.Unlock()
}

// usage returns the open streams and the booked bytes.
func (s *streamSlots) usage() (open int, pending int64) {
	open, _ = s.conns.Open()
	s.mu.Lock()
	defer s.mu.Unlock()
	return open, s.pending
}
