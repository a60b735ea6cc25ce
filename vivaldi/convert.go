package vivaldi

import (
	"math"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/nodestate"
)

// Config is serf's default Vivaldi configuration with shoal's
// dimensionality (nodestate.CoordDims): a client made with it updates
// coordinates every shoal node can compare.
func Config() *coordinate.Config {
	c := coordinate.DefaultConfig()
	c.Dimensionality = nodestate.CoordDims
	return c
}

// micros converts seconds to microseconds rounded to 0.01 µs, which
// keeps the gossiped JSON short and loses nothing a LAN can measure.
func micros(s float64) float64 { return math.Round(s*1e8) / 100 }

// FromSerf converts serf's coordinate (seconds) to the gossiped form
// (microseconds, rounded to 0.01 µs; the error to 4 decimals).
func FromSerf(c *coordinate.Coordinate) *nodestate.Coord {
	out := &nodestate.Coord{Vec: make([]float64, len(c.Vec)), Error: math.Round(c.Error*1e4) / 1e4,
		Adjust: micros(c.Adjustment), Height: micros(c.Height)}
	for i, v := range c.Vec {
		out.Vec[i] = micros(v)
	}
	return out
}

// ToSerf converts a gossiped coordinate (microseconds) to serf's
// (seconds); nil for none or one that fails validation, which serf could
// not compare (it panics on a dimensionality conflict).
func ToSerf(c *nodestate.Coord) *coordinate.Coordinate {
	if c == nil || c.Validate() != nil {
		return nil
	}
	out := &coordinate.Coordinate{Vec: make([]float64, len(c.Vec)), Error: c.Error,
		Adjustment: c.Adjust / 1e6, Height: c.Height / 1e6}
	for i, v := range c.Vec {
		out.Vec[i] = v / 1e6
	}
	return out
}

// Distance is the round trip between the nodes at a and b that their
// coordinates predict (serf's DistanceTo, as `consul rtt`); ok is false
// when either is missing or they cannot be compared (another
// dimensionality, a component not finite), where serf would panic or
// answer nonsense.
func Distance(a, b *coordinate.Coordinate) (time.Duration, bool) {
	if a == nil || b == nil || !a.IsCompatibleWith(b) || !a.IsValid() || !b.IsValid() {
		return 0, false
	}
	return a.DistanceTo(b), true
}

// EstimateRTT is Distance between two gossiped coordinates; ok is false
// when either is missing or invalid.
func EstimateRTT(a, b *nodestate.Coord) (time.Duration, bool) {
	return Distance(ToSerf(a), ToSerf(b))
}
