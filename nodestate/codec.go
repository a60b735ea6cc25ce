package nodestate

import (
	"encoding/json"
	"fmt"
	"math"
)

// Wire format: one type byte, one version byte, then a JSON body. JSON keeps
// the format debuggable and forward-compatible (unknown fields are ignored);
// the short field names keep a state well under one UDP packet (network rows
// do not travel in gossip: netrow.go).
const (
	msgState  byte = 's' // one NodeState, sent as a broadcast
	msgStates byte = 'S' // every known NodeState, sent by push/pull
	wireV1    byte = 1

	// MaxMessageSize bounds what a decoder accepts from the network.
	MaxMessageSize = 8 << 20

	// MaxNameLen bounds a node's name.
	MaxNameLen  = 128
	maxPEs      = 64
	maxProbes   = 16
	maxNet      = 1 << 14
	maxStates   = 1 << 16
	maxProposal = 16
	// MaxFaultLen bounds RaftInfo.Fault: a reason, not a log.
	MaxFaultLen = 256
)

// EncodeState encodes one node's state for a broadcast.
func EncodeState(s *NodeState) ([]byte, error) {
	return encode(msgState, s)
}

// EncodeStates encodes many states for push/pull.
func EncodeStates(ss []NodeState) ([]byte, error) {
	return encode(msgStates, ss)
}

func encode(typ byte, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode gossip message: %w", err)
	}
	return append([]byte{typ, wireV1}, body...), nil
}

// DecodeState decodes and validates a broadcast.
func DecodeState(b []byte) (NodeState, error) {
	var s NodeState
	if err := decode(b, msgState, &s); err != nil {
		return NodeState{}, err
	}
	if err := s.Validate(); err != nil {
		return NodeState{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return s, nil
}

// DecodeStates decodes and validates a push/pull payload. One invalid state
// rejects the whole payload: a peer that sends garbage is not trusted for the
// rest of what it sent either.
func DecodeStates(b []byte) ([]NodeState, error) {
	var ss []NodeState
	if err := decode(b, msgStates, &ss); err != nil {
		return nil, err
	}
	if len(ss) > maxStates {
		return nil, fmt.Errorf("%w: %d states, at most %d", ErrMalformed, len(ss), maxStates)
	}
	for i := range ss {
		if err := ss[i].Validate(); err != nil {
			return nil, fmt.Errorf("%w: state %d: %w", ErrMalformed, i, err)
		}
	}
	return ss, nil
}

func decode(b []byte, want byte, v any) error {
	if err := checkHeader(b, want); err != nil {
		return err
	}
	if err := json.Unmarshal(b[2:], v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}

// checkHeader rejects a message that is too large, or not of type want in
// this agent's wire version.
func checkHeader(b []byte, want byte) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(b), MaxMessageSize)
	}
	if len(b) < 2 {
		return fmt.Errorf("%w: %d bytes is shorter than the header", ErrMalformed, len(b))
	}
	if b[0] != want {
		return fmt.Errorf("%w: type %q, want %q", ErrMalformed, b[0], want)
	}
	if b[1] != wireV1 {
		return fmt.Errorf("%w: version %d, this agent speaks %d", ErrMalformed, b[1], wireV1)
	}
	return nil
}

// Validate rejects a state that no honest agent would send.
func (s *NodeState) Validate() error {
	switch {
	case s.Name == "" || len(s.Name) > MaxNameLen:
		return fmt.Errorf("name %q must have 1 to %d bytes", s.Name, MaxNameLen)
	case !validPort(s.GossipPort) || !validPort(s.RaftPort) || !validPort(s.HTTPPort) || !validPort(s.ProbePort):
		return fmt.Errorf("node %s: port out of range", s.Name)
	case s.Static.Cores < 0 || s.Static.Threads < 0 || s.Dyn.Users < 0:
		return fmt.Errorf("node %s: negative count", s.Name)
	case len(s.Raft.Proposal) > maxProposal:
		return fmt.Errorf("node %s: bootstrap proposal longer than %d", s.Name, maxProposal)
	case len(s.Raft.Want) > maxProposal:
		return fmt.Errorf("node %s: wanted servers longer than %d", s.Name, maxProposal)
	case len(s.Raft.Fault) > MaxFaultLen:
		return fmt.Errorf("node %s: raft fault longer than %d bytes", s.Name, MaxFaultLen)
	case s.Dyn.NetWindowMs < 0:
		return fmt.Errorf("node %s: negative traffic window %d ms", s.Name, s.Dyn.NetWindowMs)
	case s.Raft.ContactMs < 0:
		return fmt.Errorf("node %s: negative raft contact %d ms", s.Name, s.Raft.ContactMs)
	case len(s.Static.PEs) > maxPEs || len(s.Probes) > maxProbes:
		return fmt.Errorf("node %s: list longer than allowed", s.Name)
	}
	if s.Coord != nil {
		if err := s.Coord.Validate(); err != nil {
			return fmt.Errorf("node %s: %w", s.Name, err)
		}
	}
	for _, m := range []Means{s.Dyn.Load, s.Dyn.CPUUtil, s.Dyn.MemAvail, s.Dyn.NetFlow} {
		if bad(m.Now) || bad(m.M1) || bad(m.M5) || bad(m.M15) {
			return fmt.Errorf("node %s: attribute is negative or not finite", s.Name)
		}
	}
	if bad(s.Static.MHz) {
		return fmt.Errorf("node %s: clock is negative or not finite", s.Name)
	}
	for _, pe := range s.Static.PEs {
		if pe.Kind == "" || pe.Count < 0 {
			return fmt.Errorf("node %s: PE needs a kind and a non-negative count", s.Name)
		}
	}
	return nil
}

func validPort(p int) bool { return p >= 0 && p <= 65535 }

func bad(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }
