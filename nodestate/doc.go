// Package nodestate is the one schema of the observed state: what every
// agent tells the cluster about its node, and what the others keep of it.
// It is pure (it imports the standard library alone), as raftfsm is for
// the desired state; gossip carries it with memberlist, probe's tracker
// produces its dynamic part, the row senders carry its network rows to the
// servers, and the leader core reads it.
//
// A node's state (NodeState) holds its identity and ports, its static
// inventory (Static: cores, memory, processing elements), its dynamic
// state with 1/5/15-minute running means (Dynamic, Means), its probes'
// heartbeats (ProbeBeat), its raft standing (RaftInfo), its Vivaldi
// coordinate (Coord) and its reading of its own link (LinkState). What an
// agent observes of a node (Entry) adds liveness (Status) and the node's
// recent traffic (TrafficPoint). A node's row of the network matrix
// (NetRow of NetEntry cells) grows with the cluster and goes to the
// servers alone.
//
// The codec is one type byte, one version byte, then a JSON body: states
// for broadcasts and push/pull (EncodeState, DecodeStates), coordinates
// for ping acks (EncodeCoordPayload), and rows for the servers
// (EncodeNetRow). Every decoder validates what it reads: anything no
// honest agent sends is ErrMalformed or ErrTooLarge.
//
// Units are in the field names or their comments: bandwidth in Mbit/s,
// traffic in bytes/s, round trips in microseconds on the wire, times in
// Unix milliseconds unless a field says otherwise.
package nodestate
