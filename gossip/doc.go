// Package gossip spreads each node's observed state through the cluster with
// hashicorp/memberlist.
//
// Every agent owns exactly one NodeState (package nodestate holds the schema
// and its codec; this package carries it): its identity, its static inventory
// (cores, memory, processing elements) and its dynamic load with 1/5/15-minute
// running means. The owner versions its state with (Boot, Seq): Boot is the
// owner's start time and Seq grows with every local update, so a restarted
// node's first state beats anything its previous life published. Receivers
// keep the newest version of every node in a Table.
//
// State travels three ways:
//
//   - broadcasts, piggy-backed on memberlist's UDP failure-detector traffic,
//     one message per update, where a newer update of a node invalidates its
//     older ones still queued;
//   - push/pull, memberlist's periodic full-state exchange over TCP, which is
//     also how a joiner receives everybody's state at once;
//   - memberlist node metadata, which carries only a node's ports and boot
//     time because it is capped at 512 bytes (NodeMeta panics past it).
//
// Liveness comes from memberlist: a node is alive, suspect, dead (failed
// without leaving) or left (left gracefully). Dead and left nodes stay in the
// table, shown as such, until Config.ReapAfter has passed.
//
// With Config.Coordinates on (the default), every node also keeps a Vivaldi
// network coordinate (hashicorp/serf/coordinate) fed by memberlist's pings:
// acks carry the acker's coordinate, the pinger updates its own with it and
// the measured RTT, and each node gossips its coordinate in NodeState.Coord,
// so any node estimates any pair's round trip (coord.go, pingdelegate.go).
//
// memberlist runs on a wrapped transport (streamguard.go) that caps inbound
// TCP streams in all and per source address and checks each stream's frame
// header before memberlist buffers its first message: a stranger without
// the key cannot make the agent hold more than a bounded number of streams
// and bytes before decryption fails.
//
// Usage:
//
//	g, err := gossip.New(cfg, initialState, logger)
//	err = g.Join(ctx, []string{"10.0.0.2:7946"})   // retried with backoff
//	g.Update(func(s *nodestate.NodeState) { s.Dyn = latest })
//	for _, n := range g.Nodes() { ... }
//	g.Leave(5 * time.Second); g.Shutdown()
package gossip
