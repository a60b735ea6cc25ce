package nodestate

import "errors"

var (
	// ErrMalformed is returned for a message that cannot be decoded or
	// that no honest agent would send.
	ErrMalformed = errors.New("malformed gossip message")
	// ErrTooLarge is returned for a message larger than its bound
	// (MaxMessageSize, MaxNetRowBytes, MaxCoordPayload).
	ErrTooLarge = errors.New("gossip message too large")
)
