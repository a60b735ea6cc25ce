package agent_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

// injected is a sampler whose user count a test sets, to make a node's
// state change on demand. Everything else is constant.
type injected struct {
	users atomic.Int64
	bytes atomic.Uint64
}

func (s *injected) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), Load1: 0.5, CPUUtil: 12, MemAvail: 8 << 30,
		NetBytes: s.bytes.Add(1 << 20), Users: int(s.users.Load())}, nil
}

func nodesOf(t *testing.T, c *testcluster.Cluster, i int) []api.Node {
	t.Helper()
	ns, err := c.Client(i).Nodes(context.Background())
	if err != nil {
		t.Fatalf("nodes from %s: %v", c.Name(i), err)
	}
	return ns
}

func find(ns []api.Node, name string) (api.Node, bool) {
	for _, n := range ns {
		if n.Name == name {
			return n, true
		}
	}
	return api.Node{}, false
}

func TestClusterConvergesWithRealInventory(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 5, testcluster.Options{Twins: true, Static: func(int) *probe.Static { return nil }})
	testcluster.WaitFor(t, 20*time.Second, "every agent to report 5 alive nodes with inventory and means", func() bool {
		for i := range 5 {
			ns := nodesOf(t, c, i)
			if len(ns) != 5 {
				return false
			}
			for _, n := range ns {
				if n.Status != "alive" || n.Cores == 0 || n.Threads == 0 || n.MemTotal == 0 ||
					n.MemAvail.M1 == 0 || n.MemAvail.M15 == 0 || n.Sampled.IsZero() || len(n.PEs) == 0 {
					return false
				}
			}
		}
		return true
	}, func() string { return fmt.Sprintf("node 0 sees %+v", nodesOf(t, c, 0)) })
}

func TestStateChangeReachesEveryNode(t *testing.T) {
	t.Parallel()
	samplers := make([]*injected, 4)
	c := testcluster.New(t, 4, testcluster.Options{Twins: true, Sampler: func(i int) probe.Sampler {
		samplers[i] = &injected{}
		return samplers[i]
	}})
	samplers[2].users.Store(17)
	testcluster.WaitFor(t, 10*time.Second, "n2's 17 users to reach every node", func() bool {
		for i := range 4 {
			n, ok := find(nodesOf(t, c, i), "n2")
			if !ok || n.Users != 17 || n.NetFlow.Now == 0 {
				return false
			}
		}
		return true
	})
}

func statusOn(t *testing.T, c *testcluster.Cluster, from int, name string) string {
	n, _ := find(nodesOf(t, c, from), name)
	return n.Status
}

func TestDeadLeftAndRestart(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, 4, testcluster.Options{Twins: true})
	testcluster.WaitFor(t, 15*time.Second, "4 alive nodes", func() bool {
		n := 0
		for _, x := range nodesOf(t, c, 0) {
			if x.Status == "alive" {
				n++
			}
		}
		return n == 4
	})
	before, _ := find(nodesOf(t, c, 0), "n3")

	c.Kill(3)
	testcluster.WaitFor(t, 15*time.Second, "n3 dead on every other node", func() bool {
		return statusOn(t, c, 0, "n3") == "dead" && statusOn(t, c, 1, "n3") == "dead" && statusOn(t, c, 2, "n3") == "dead"
	}, func() string { return statusOn(t, c, 0, "n3") })

	c.Restart(3)
	testcluster.WaitFor(t, 15*time.Second, "n3 alive again with its new state", func() bool {
		for i := range 3 {
			n, _ := find(nodesOf(t, c, i), "n3")
			if n.Status != "alive" || !n.Sampled.After(before.Sampled) {
				return false
			}
		}
		return true
	})

	c.Stop(2)
	testcluster.WaitFor(t, 15*time.Second, "n2 shown left after a graceful stop", func() bool {
		return statusOn(t, c, 0, "n2") == "left" && statusOn(t, c, 3, "n2") == "left"
	})
}
