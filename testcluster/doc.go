// Package testcluster starts real shoal clusters for tests: in-process
// agents on loopback (New), each with its own ports and data directory, or
// agents as separate OS processes (StartProcs, what `make demo` uses).
//
// It is a library in the spirit of hashicorp/raft's testing.go: real
// memberlist, real raft over TCP, real boltdb, nothing mocked. With
// Options.Twins the cluster's gossip and raft run over in-memory twins
// instead (package twins: memberlist and raft themselves, on in-memory
// transports and raft's InmemStore), and links can be cut without root:
//
//	c := testcluster.New(t, 3, testcluster.Options{Twins: true})
//	c.Partition([]int{0}, []int{1, 2}) // node 0 alone
//	c.Heal()
//
//	c := testcluster.New(t, 5, testcluster.Options{BootstrapExpect: 3})
//	leader := c.WaitLeader(10 * time.Second)
//	c.Kill(leader)                       // abrupt: peers see it dead
//	testcluster.WaitFor(t, 15*time.Second, "a new leader", func() bool { ... })
//	c.Restart(leader)                    // same name, ports and data
//
// # Which tests run on the twins
//
// Tests of what an agent does with its cluster (jobs, placement, probes,
// raft failover and quorum, gossip's dead and left, partitions) run on the
// twins: they are the real memberlist and raft over an in-memory medium,
// cost no TLS handshake or fsync, and do not lose a race with the kernel
// for a port. A smaller set stays on sockets, TLS and boltdb, because the
// transports and the disk are what it tests:
//
//   - TLS: the API's and the agents' mutual authentication, a leaf renewed
//     while running, a rolling change of CA (agent/tls_test.go,
//     agent/tls_rotation_test.go), and a node with another cluster token
//     kept out of gossip (agent/token_test.go);
//   - boltdb and raft's file snapshots across a restart: every agent
//     restarted from its disk, an agent killed and restarted under a
//     running attempt, a snapshot saved and restored (agent/raft_test.go's
//     TestRestartEveryAgentRecoversState, agent/restart_test.go,
//     agent/snapshot_test.go), and a voter whose disk fills up
//     (agent/logfault_test.go);
//   - a leader killed with open TLS connections and an open database under
//     fifty submissions (agent/exactlyonce_test.go);
//   - what needs real interfaces or processes: the tests in network
//     namespaces (agent/*_netns_test.go) and those of a shoal binary run as
//     its own process.
//
// Tests synchronise with WaitFor (a condition polled until a deadline),
// never with bare sleeps.
package testcluster
