package probe

import (
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
)

// Config gathers the package's tunables for the agent to embed.
type Config struct {
	// SampleInterval is how often the node state is sampled
	// (--sample-interval). Default 3 s; seed 002 samples every 3–10 s.
	// Bounds 100 ms (the Tracker keeps at most 15 minutes at that rate)
	// to 1 min (slower would leave the 1-minute mean one sample deep).
	SampleInterval time.Duration
	// Budget caps bandwidth-probe traffic; see probeplan.BudgetConfig.
	Budget probeplan.BudgetConfig
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{SampleInterval: 3 * time.Second, Budget: probeplan.DefaultBudgetConfig()}
}

// Validate reports the first field out of bounds, naming the bound.
func (c Config) Validate() error {
	if c.SampleInterval < 100*time.Millisecond || c.SampleInterval > time.Minute {
		return fmt.Errorf("probe: SampleInterval = %s, want 100ms..1m0s", c.SampleInterval)
	}
	if err := c.Budget.Validate(); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	return nil
}
