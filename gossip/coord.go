package gossip

import (
	"github.com/hashicorp/serf/coordinate"

	"github.com/shoal-hpc/shoal/vivaldi"
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
//
// The coordinate is serf's (seconds) inside the client and the gossiped
// form (nodestate.Coord, microseconds) everywhere else; package vivaldi
// converts between the two.

// newCoordClient returns a client at the origin whose coordinates every
// shoal node can compare (vivaldi.Config).
func newCoordClient() (*coordinate.Client, error) {
	return coordinate.NewClient(vivaldi.Config())
}
