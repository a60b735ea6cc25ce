package elastic

import (
	"fmt"
	"time"
)

// Config tunes the decision layer. The zero value is not usable: start from DefaultConfig.
type Config struct {
	// MinWindow is how long the current node count must have been measured before its rate is
	// trusted. Default 5s.
	MinWindow time.Duration
	// MinIters is how many iterations the measurement must span. Default 3.
	MinIters int64
	// MinInterval is the least time between two resizes of one job. Default 30s.
	MinInterval time.Duration
	// DefaultRestartCost is the checkpoint + relaunch time assumed before the job's first
	// measured restart. Default 10s.
	DefaultRestartCost time.Duration
	// Margin: a job is grown to finish within Margin of the time left (and counts as on track
	// while its prediction does). In (0,1]; default 0.9.
	Margin float64
	// ShrinkSlack: a job is shrunk only to a count that finishes within ShrinkSlack of the time
	// left; below Margin, so that a grow is not undone. In (0,Margin]; default 0.7.
	ShrinkSlack float64
	// ShrinkGain: a shrink must hand back at least ShrinkGain times the node-time the restart
	// burns (node-seconds freed for others versus nodes x restart cost). Default 2.
	ShrinkGain float64
	// MinGain is the least time a grow must save beyond the restart cost, as a fraction of the
	// restart cost. Default 0.1.
	MinGain float64
	// CommHeavy is the reported communication share from which a job is not grown. In (0,1];
	// default 0.5.
	CommHeavy float64
}

// DefaultConfig returns the defaults documented on each field.
func DefaultConfig() Config {
	return Config{
		MinWindow: 5 * time.Second, MinIters: 3, MinInterval: 30 * time.Second,
		DefaultRestartCost: 10 * time.Second, Margin: 0.9, ShrinkSlack: 0.7, ShrinkGain: 2, MinGain: 0.1, CommHeavy: 0.5,
	}
}

// Validate names the first field out of its bounds.
func (c Config) Validate() error {
	switch {
	case c.MinWindow < 0:
		return fmt.Errorf("%w: MinWindow = %v, must be >= 0", ErrConfig, c.MinWindow)
	case c.MinIters < 1:
		return fmt.Errorf("%w: MinIters = %d, must be >= 1", ErrConfig, c.MinIters)
	case c.MinInterval < 0:
		return fmt.Errorf("%w: MinInterval = %v, must be >= 0", ErrConfig, c.MinInterval)
	case c.DefaultRestartCost < 0:
		return fmt.Errorf("%w: DefaultRestartCost = %v, must be >= 0", ErrConfig, c.DefaultRestartCost)
	case !(c.Margin > 0 && c.Margin <= 1):
		return fmt.Errorf("%w: Margin = %v, must be in (0,1]", ErrConfig, c.Margin)
	case !(c.ShrinkSlack > 0 && c.ShrinkSlack <= c.Margin):
		return fmt.Errorf("%w: ShrinkSlack = %v, must be in (0,Margin=%v]", ErrConfig, c.ShrinkSlack, c.Margin)
	case !(c.ShrinkGain >= 0):
		return fmt.Errorf("%w: ShrinkGain = %v, must be >= 0", ErrConfig, c.ShrinkGain)
	case !(c.MinGain >= 0):
		return fmt.Errorf("%w: MinGain = %v, must be >= 0", ErrConfig, c.MinGain)
	case !(c.CommHeavy > 0 && c.CommHeavy <= 1):
		return fmt.Errorf("%w: CommHeavy = %v, must be in (0,1]", ErrConfig, c.CommHeavy)
	}
	return nil
}
