package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// OpenFunc opens the stream of server holding the entries after after
// (GET /v1/replicate?after=N on the server's API, see OpenHTTP).
// Cancelling ctx must end the stream: a Read in progress returns an error.
type OpenFunc func(ctx context.Context, server string, after uint64) (io.ReadCloser, error)

// Config is what a Follower is built from.
type Config struct {
	// FSM is the local copy the follower keeps, written only by the
	// follower (Apply, Restore) and read by anyone. Required.
	FSM *raftfsm.FSM
	// Wake channels are signalled, without blocking, after every frame
	// that changed FSM, as raftnode's notifying FSM does for a server.
	Wake []chan struct{}
	// Servers lists the servers the follower may follow (names or
	// addresses, whatever Open takes); asked again at every reconnect.
	// Required.
	Servers func() []string
	// Open opens a server's stream. Required.
	Open OpenFunc
	// Log receives connection changes; nil discards.
	Log *slog.Logger
	// Now reads the clock for the silence check; nil is time.Now.
	Now func() time.Time
	// After waits (backoff, silence checks); nil is time.After.
	After func(time.Duration) <-chan time.Time
	// Pick chooses the first server among n (then the follower goes round
	// the list); nil is math/rand/v2's IntN, which spreads clients over
	// the servers.
	Pick func(n int) int
	// Silence is how long a stream may send nothing, not even a heartbeat,
	// before the follower drops it and follows another server. Several
	// times the feed's heartbeat (DefaultHeartbeat). Default 5s.
	Silence time.Duration
	// MinBackoff and MaxBackoff bound the wait between failed
	// connections, doubling from the one to the other; a stream that
	// delivered a frame resets it. Defaults 100ms and 5s.
	MinBackoff, MaxBackoff time.Duration
}

// DefaultConfig returns the default timings; FSM, Servers and Open must
// still be set.
func DefaultConfig() Config {
	return Config{Silence: 5 * time.Second, MinBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}
}

// withDefaults fills the zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Silence == 0 {
		c.Silence = d.Silence
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = d.MinBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = max(d.MaxBackoff, c.MinBackoff)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.After == nil {
		c.After = time.After
	}
	return c
}

// Validate names the first missing field or broken bound.
func (c Config) Validate() error {
	switch {
	case c.FSM == nil:
		return errors.New("replica: Config.FSM is required")
	case c.Servers == nil:
		return errors.New("replica: Config.Servers is required")
	case c.Open == nil:
		return errors.New("replica: Config.Open is required")
	case c.Silence <= 0:
		return fmt.Errorf("replica: Config.Silence %v must be positive", c.Silence)
	case c.MinBackoff <= 0 || c.MaxBackoff < c.MinBackoff:
		return fmt.Errorf("replica: Config.MinBackoff %v must be positive and at most MaxBackoff %v", c.MinBackoff, c.MaxBackoff)
	}
	return nil
}
