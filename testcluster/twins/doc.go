// Package twins holds in-memory stand-ins for the agent's two transports,
// for running a whole cluster in one test process: a memberlist transport
// (Gossip, after memberlist's MockNetwork) and a raft backend (Raft:
// raft's own InmemTransport and InmemStore). They are fakes at the one
// boundary a test machine cannot give at will, a network that partitions
// on demand; everything above them (memberlist, raft, shoal's gossip, FSM,
// leader and job runner) is the real code.
//
// One Network joins the twins of a cluster, and cuts and restores their
// links the way hashicorp/raft's testing.go does for its clusters:
//
//	net := twins.NewNetwork()
//	cfg.Gossip.Transport = net.Gossip("n0") // each start of n0
//	cfg.RaftBackend = net.Raft("n0")        // keeps n0's raft state across restarts
//	...
//	net.Partition([]string{"n0"}, []string{"n1", "n2"})
//	net.Disconnect("n1") // n1 hears nobody and nobody hears n1
//	net.Heal()
//
// A cut link drops gossip packets silently and refuses streams, as a
// dead switch port would; raft's RPCs over it fail at once. The agents'
// HTTP API and their peer-to-peer HTTP (forwarded writes, network rows,
// the clients' replication stream) stay on loopback and are not cut.
package twins
