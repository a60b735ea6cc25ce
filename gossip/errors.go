package gossip

import "errors"

var (
	// ErrMalformed is returned for a gossip message that cannot be decoded.
	ErrMalformed = errors.New("malformed gossip message")
	// ErrTooLarge is returned for a message larger than MaxMessageSize.
	ErrTooLarge = errors.New("gossip message too large")
	// ErrJoinStopped is returned when the context ends before any join
	// address answered.
	ErrJoinStopped = errors.New("join stopped before any address answered")
)

// ErrStreamRefused is returned for an inbound gossip stream the guard closes
// before memberlist reads it: over a cap, or not what a member would send.
var ErrStreamRefused = errors.New("gossip stream refused before authentication")
