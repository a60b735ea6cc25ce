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
// Tests synchronise with WaitFor (a condition polled until a deadline),
// never with bare sleeps.
package testcluster
