package nodestate

import "time"

// Status is a node's liveness as memberlist sees it.
type Status string

// The statuses a node can have. Unknown is a node whose state arrived
// before memberlist told us anything about it.
const (
	StatusAlive   Status = "alive"
	StatusSuspect Status = "suspect"
	StatusDead    Status = "dead"
	StatusLeft    Status = "left"
	StatusUnknown Status = "unknown"
)

// Entry is what an agent observes of one node: its newest state, its
// liveness and its recent traffic. gossip's Table holds one per member.
type Entry struct {
	// State's slices and pointers are shared between the copies gossip
	// hands out, as Traffic is: read what they point at, never write it
	// (gossip.Gossip.Nodes says what a reader may change).
	State  NodeState
	Status Status
	// Since is when Status last changed, on the local clock.
	Since time.Time
	// HasState is false for a member memberlist knows but whose state has
	// not arrived yet.
	HasState bool
	// Traffic is the node's recent traffic as a step function: the
	// samples at which it changed, oldest first (gossip's Table keeps
	// it). Shared between copies: read it, never write it.
	Traffic []TrafficPoint
}

// TrafficPoint is one traffic sample of a node: what it received and
// sent over the sample interval that ended at At (Unix milliseconds, the
// owner's clock), bytes/s. In a node's traffic history it stands until
// the next point.
type TrafficPoint struct {
	At     int64
	Rx, Tx float64
}
