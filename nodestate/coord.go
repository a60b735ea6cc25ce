package nodestate

import (
	"fmt"
	"math"
)

// Coord is a Vivaldi network coordinate as it travels: serf's
// coordinate.Coordinate with its distances in microseconds rounded to
// 0.01 µs, which keeps the JSON short and loses nothing a LAN can
// measure. Package vivaldi converts it to and from serf's type, in
// seconds, where the coordinate is updated and compared.
type Coord struct {
	Vec    []float64 `json:"v"`
	Error  float64   `json:"e"`
	Adjust float64   `json:"a"`
	Height float64   `json:"h"`
}

const (
	msgCoord byte = 'c' // one Coord, sent as the payload of a ping's ack

	// CoordDims is the dimensionality every shoal node uses (serf's
	// default, after Ledlie et al.); a coordinate of another length cannot
	// be compared and is rejected.
	CoordDims = 8
	// MaxCoordPayload bounds an ack payload: 8 components of at most ~25
	// characters plus the other fields fit many times over.
	MaxCoordPayload = 512
	// maxCoordMicros bounds every component: 10 s, serf's largest RTT.
	maxCoordMicros = 10e6
	// maxCoordError bounds the dimensionless error; serf caps it at 1.5.
	maxCoordError = 10
)

// Validate rejects a coordinate no honest agent sends: one of another
// dimensionality (serf panics when comparing those), a component that is
// not finite or beyond 10 s, a negative height or error.
func (c *Coord) Validate() error {
	if len(c.Vec) != CoordDims {
		return fmt.Errorf("coordinate has %d dimensions, want %d", len(c.Vec), CoordDims)
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

// EncodeCoordPayload encodes c as the payload of a ping's ack.
func EncodeCoordPayload(c *Coord) ([]byte, error) {
	return encode(msgCoord, c)
}

// DecodeCoordPayload decodes and validates an ack payload. It reads what a
// peer sent over UDP: anything but a well-formed coordinate is an error.
func DecodeCoordPayload(b []byte) (*Coord, error) {
	if len(b) > MaxCoordPayload {
		return nil, fmt.Errorf("%w: coordinate payload of %d bytes, at most %d", ErrTooLarge, len(b), MaxCoordPayload)
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
