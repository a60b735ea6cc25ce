// Package testcluster starts real shoal clusters for tests: in-process
// agents on loopback (New), each with its own ports and data directory, or
// agents as separate OS processes (StartProcs, what `make demo` uses).
//
// It is a library in the spirit of hashicorp/raft's testing.go: real
// memberlist, real raft over TCP, real boltdb, nothing mocked.
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
