package connlimit

import (
	"net"
	"sync"
)

// Slots counts open connections in all and per source. The zero value is
// not usable; use NewSlots. Safe for concurrent use.
type Slots struct {
	max, perSource int

	mu       sync.Mutex
	open     int
	bySource map[string]int
}

// NewSlots allows max connections at once, at most perSource of them from
// one source. A source key of "" is counted in the total only.
func NewSlots(max, perSource int) *Slots {
	return &Slots{max: max, perSource: perSource, bySource: make(map[string]int)}
}

// Take books a slot for a connection from src, or reports false when the
// total or src's share is used up.
func (s *Slots) Take(src string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open >= s.max || src != "" && s.bySource[src] >= s.perSource {
		return false
	}
	s.open++
	if src != "" {
		s.bySource[src]++
	}
	return true
}

// Give returns a slot booked by Take for src.
func (s *Slots) Give(src string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if src == "" {
		return
	}
	if s.bySource[src]--; s.bySource[src] <= 0 {
		delete(s.bySource, src)
	}
}

// Open returns how many slots are booked, and by how many sources.
func (s *Slots) Open() (conns, sources int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open, len(s.bySource)
}

// SourceIP keys a connection by its remote IP address: the unit a LAN
// stranger cannot multiply at will, unlike ports. Connections without an
// IP (a Unix socket) key as "", counted in the total only.
func SourceIP(c net.Conn) string {
	switch a := c.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.IP.String()
	case *net.UDPAddr:
		return a.IP.String()
	}
	return ""
}
