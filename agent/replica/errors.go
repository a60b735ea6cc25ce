package replica

import "errors"

var (
	// ErrBadFrame is a frame the decoder refuses: unknown kind, a payload
	// too short for its header, or a length beyond the kind's bound.
	ErrBadFrame = errors.New("replica: bad frame")
	// ErrOutOfOrder is an entry at or below the follower's index: applying
	// it would apply an entry twice.
	ErrOutOfOrder = errors.New("replica: entry out of order")
	// ErrSilent is a stream that sent nothing, not even a heartbeat, for
	// longer than Config.Silence.
	ErrSilent = errors.New("replica: stream silent")
	// ErrUnhealthy is a feed whose health check (Feed.SetHealth) fails:
	// it streams nothing until the check passes again.
	ErrUnhealthy = errors.New("replica: this server's state is not current")
	// ErrNoServers is a follower with no server to connect to.
	ErrNoServers = errors.New("replica: no server to follow")
)
