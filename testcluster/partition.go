package testcluster

import "github.com/shoal-hpc/shoal/testcluster/twins"

// twinRaftPort is the raft port of node 0 of a cluster on twins, node i's
// being twinRaftPort+i.
const twinRaftPort = 20000

// Partition cuts gossip and raft between nodes of different groups (node
// indices), as a failed switch would; nodes in no group keep their links.
// The cluster must run on twins (Options.Twins).
func (c *Cluster) Partition(groups ...[]int) {
	c.t.Helper()
	net := c.twins("Partition")
	var named [][]string
	for _, g := range groups {
		var names []string
		for _, i := range g {
			names = append(names, c.cfgs[i].Name)
		}
		named = append(named, names)
	}
	net.Partition(named...)
}

// Disconnect cuts node i off from every other node.
func (c *Cluster) Disconnect(i int) {
	c.t.Helper()
	c.twins("Disconnect").Disconnect(c.cfgs[i].Name)
}

// Heal restores every link Partition and Disconnect cut.
func (c *Cluster) Heal() {
	c.t.Helper()
	c.twins("Heal").Heal()
}

func (c *Cluster) twins(op string) *twins.Network {
	c.t.Helper()
	if c.net == nil {
		c.t.Fatalf("%s needs a cluster on twins: testcluster.Options{Twins: true}", op)
	}
	return c.net
}
