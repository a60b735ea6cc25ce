package gossip

import (
	"math"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/nodestate"
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

// coordConfig is serf's default Vivaldi configuration with shoal's
// dimensionality.
func coordConfig() *coordinate.Config {
	c := coordinate.DefaultConfig()
	c.Dimensionality = nodestate.CoordDims
	return c
}

func micros(s float64) float64 { return math.Round(s*1e8) / 100 }

// toCoord converts serf's coordinate (seconds) to the wire form.
func toCoord(c *coordinate.Coordinate) *nodestate.Coord {
	out := &nodestate.Coord{Vec: make([]float64, len(c.Vec)), Error: math.Round(c.Error*1e4) / 1e4,
		Adjust: micros(c.Adjustment), Height: micros(c.Height)}
	for i, v := range c.Vec {
		out.Vec[i] = micros(v)
	}
	return out
}

// toSerf converts the wire form back to serf's coordinate.
func toSerf(c *nodestate.Coord) *coordinate.Coordinate {
	out := &coordinate.Coordinate{Vec: make([]float64, len(c.Vec)), Error: c.Error,
		Adjustment: c.Adjust / 1e6, Height: c.Height / 1e6}
	for i, v := range c.Vec {
		out.Vec[i] = v / 1e6
	}
	return out
}

// EstimateRTT is the round trip between the nodes at c and o that their
// coordinates predict; ok is false when either is missing or invalid.
func EstimateRTT(c, o *nodestate.Coord) (time.Duration, bool) {
	if c == nil || o == nil || c.Validate() != nil || o.Validate() != nil {
		return 0, false
	}
	return toSerf(c).DistanceTo(toSerf(o)), true
}
