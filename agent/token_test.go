package agent_test

import (
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/testcluster"
)

// A node started with another cluster token is kept out of gossip: its join fails, the
// cluster never lists it, and it never sees the cluster. A node with the right token, started
// after it, joins (the control: it shows that there was time for the intruder to get in).
func TestNodeWithoutTheTokenIsKeptOut(t *testing.T) {
	t.Parallel()
	// Real transports: the token keeps the intruder out of gossip on the
	// sockets an attacker would reach.
	c := testcluster.New(t, 4, testcluster.Options{BootstrapExpect: 2, Later: 2,
		Configure: func(i int, cfg *agent.Config) {
			if i == 2 {
				cfg.Token = testcluster.NewToken(t)
			}
		}})
	c.WaitLeader(45 * time.Second)
	c.Start(2) // the intruder, joining n0 and n1
	c.Start(3) // the control, joining all three
	alive := func(g *gossip.Gossip, name string) bool {
		e, ok := g.Node(name)
		return ok && e.Status == nodestate.StatusAlive
	}
	testcluster.WaitFor(t, 20*time.Second, "the control node n3 alive in n0's and n1's gossip", func() bool {
		return alive(c.Agent(0).Gossip(), "n3") && alive(c.Agent(1).Gossip(), "n3")
	})
	for _, i := range []int{0, 1, 3} {
		if _, ok := c.Agent(i).Gossip().Node("n2"); ok {
			t.Errorf("%s lists n2, a node with another cluster token", c.Name(i))
		}
	}
	for _, name := range []string{"n0", "n1", "n3"} {
		if _, ok := c.Agent(2).Gossip().Node(name); ok {
			t.Errorf("the intruder n2 sees %s", name)
		}
	}
}
