package gossip

import "errors"

var (
	// ErrJoinStopped is returned when the context ends before any join
	// address answered.
	ErrJoinStopped = errors.New("join stopped before any address answered")
)

// ErrStreamRefused is returned for an inbound gossip stream the guard closes
// before memberlist reads it: over a cap, or not what a member would send.
var ErrStreamRefused = errors.New("gossip stream refused before authentication")
