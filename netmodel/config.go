package netmodel

import "fmt"

// Config tunes switch inference and the model's doubt.
type Config struct {
	// NearRatio: a measured pair is "near" (same switch) when its peak
	// bandwidth is at least NearRatio times the best peak each of its two
	// nodes reached with any other peer. Default 0.6: an uplink shared 2:1
	// or worse reads as far, a same-switch pair 40 % below its best as near.
	NearRatio float64
	// MinEvidence is how many measured pairs a node needs before a node
	// that clusters with nobody is taken as a switch of its own rather than
	// unknown. Default 2.
	MinEvidence int
	// Disagree is the relative gap between a direct measurement and the
	// model's derivation above which the pair is uncertain and keeps
	// direct tests. Default 0.5 (measured below half, or above 1.5×, of
	// the derived peak).
	Disagree float64
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{NearRatio: 0.6, MinEvidence: 2, Disagree: 0.5}
}

// Validate names the first field out of bounds.
func (c Config) Validate() error {
	switch {
	case !(c.NearRatio > 0 && c.NearRatio < 1):
		return fmt.Errorf("netmodel: NearRatio = %v, want 0 < x < 1", c.NearRatio)
	case c.MinEvidence < 1 || c.MinEvidence > 64:
		return fmt.Errorf("netmodel: MinEvidence = %d, want 1..64", c.MinEvidence)
	case !(c.Disagree > 0 && c.Disagree < 1):
		return fmt.Errorf("netmodel: Disagree = %v, want 0 < x < 1", c.Disagree)
	}
	return nil
}

// orDefault treats the zero Config as the defaults.
func (c Config) orDefault() Config {
	if c == (Config{}) {
		return DefaultConfig()
	}
	return c
}
