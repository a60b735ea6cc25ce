package gossip

import (
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/serf/coordinate"
)

// Network coordinates: every node keeps a Vivaldi coordinate
// (hashicorp/serf/coordinate, as Consul and Serf do) so that the round
// trip between any two nodes can be estimated from two small vectors,
// O(n) state instead of an O(n²) matrix of pings.
//
// The coordinate is fed by memberlist's failure detector, which already
// pings one node per probe interval: the ack of every direct ping carries
// the acking node's coordinate (AckPayload), and the pinger updates its
// own coordinate with that and the measured RTT (NotifyPingComplete).
// Indirect and TCP fallback pings do not report, as memberlist documents.
//
// Unlike Serf, which keeps the coordinates it saw in acks in a cache, each
// node also publishes its own coordinate in its gossiped NodeState (Coord).
// The cache would only hold the peers this node pinged or was pinged by;
// gossip gives every agent every node's coordinate, so any agent can answer
// `shoal rtt A B` and `shoal net` for every pair, and the coordinate rides
// on the state updates the node sends anyway (about 100 bytes each).

// Coord is a Vivaldi coordinate as it travels: serf's coordinate.Coordinate
// with its distances in microseconds rounded to 0.01 µs, which keeps the
// JSON short and loses nothing a LAN can measure.
type Coord struct {
	Vec    []float64 `json:"v"`
	Error  float64   `json:"e"`
	Adjust float64   `json:"a"`
	Height float64   `json:"h"`
}

const (
	msgCoord byte = 'c' // one Coord, sent as the payload of a ping's ack

	// coordDims is the dimensionality every shoal node uses (serf's
	// default, after Ledlie et al.); a coordinate of another length cannot
	// be compared and is rejected.
	coordDims = 8
	// maxCoordPayload bounds an ack payload: 8 components of at most ~25
	// characters plus the other fields fit many times over.
	maxCoordPayload = 512
	// maxCoordMicros bounds every component: 10 s, serf's largest RTT.
	maxCoordMicros = 10e6
	// maxCoordError bounds the dimensionless error; serf caps it at 1.5.
	maxCoordError = 10
)

// coordConfig is serf's default Vivaldi configuration with shoal's
// dimensionality.
func coordConfig() *coordinate.Config {
	c := coordinate.DefaultConfig()
	c.Dimensionality = coordDims
	return c
}

func micros(s float64) float64 { return math.Round(s*1e8) / 100 }

// toCoord converts serf's coordinate (seconds) to the wire form.
func toCoord(c *coordinate.Coordinate) *Coord {
	out := &Coord{Vec: make([]float64, len(c.Vec)), Error: math.Round(c.Error*1e4) / 1e4,
		Adjust: micros(c.Adjustment), Height: micros(c.Height)}
	for i, v := range c.Vec {
		out.Vec[i] = micros(v)
	}
	return out
}

// serf converts the wire form back to serf's coordinate.
func (c *Coord) serf() *coordinate.Coordinate {
	out := &coordinate.Coordinate{Vec: make([]float64, len(c.Vec)), Error: c.Error,
		Adjustment: c.Adjust / 1e6, Height: c.Height / 1e6}
	for i, v := range c.Vec {
		out.Vec[i] = v / 1e6
	}
	return out
}

// Validate rejects a coordinate no honest agent sends: one of another
// dimensionality (serf panics when comparing those), a component that is
// not finite or beyond 10 s, a negative height or error.
func (c *Coord) Validate() error {
	if len(c.Vec) != coordDims {
		return fmt.Errorf("coordinate has %d dimensions, want %d", len(c.Vec), coordDims)
	}
	for _, v := range append([]float64{c.Adjust, c.Height}, c.Vec...) {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxCoordMicros {
			return fmt.Errorf("coordinate component %v is not finite or beyond %g µs", v, maxCoordMicros)
		}
	}
	if c.Height < 0 || bad(c.Error) || c.Error > maxCoordError {
		return fmt.Errorf("coordinate height %v or error %v out of range", c.Height, c.Error)
	}
	return nil
}

// EstimateRTT is the round trip between the nodes at c and o that their
// coordinates predict; ok is false when either is missing or invalid.
func (c *Coord) EstimateRTT(o *Coord) (time.Duration, bool) {
	if c == nil || o == nil || c.Validate() != nil || o.Validate() != nil {
		return 0, false
	}
	return c.serf().DistanceTo(o.serf()), true
}

// EncodeCoordPayload encodes c as the payload of a ping's ack.
func EncodeCoordPayload(c *Coord) ([]byte, error) {
	return encode(msgCoord, c)
}

// DecodeCoordPayload decodes and validates an ack payload. It reads what a
// peer sent over UDP: anything but a well-formed coordinate is an error.
func DecodeCoordPayload(b []byte) (*Coord, error) {
	if len(b) > maxCoordPayload {
		return nil, fmt.Errorf("%w: coordinate payload of %d bytes, at most %d", ErrTooLarge, len(b), maxCoordPayload)
	}
	var c Coord
	if err := decode(b, msgCoord, &c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return &c, nil
}
