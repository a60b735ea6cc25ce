package gossip

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/shoal-hpc/shoal/nodestate"
)

// TestGossipOverCustomTransport runs three nodes over memberlist's
// in-memory network: Config.Transport replaces the sockets, the nodes join
// by the addresses the network hands out and a state change spreads.
func TestGossipOverCustomTransport(t *testing.T) {
	t.Parallel()
	var network memberlist.MockNetwork
	names := []string{"m0", "m1", "m2"}
	transports := make([]memberlist.NodeAwareTransport, len(names))
	// MockNetwork's maps are not safe for concurrent use: every transport
	// exists before any memberlist starts sending.
	for i, name := range names {
		transports[i] = network.NewTransport(name)
	}
	var nodes []*Gossip
	defer func() { shutdownAll(nodes) }()
	for i, name := range names {
		cfg := TestConfig()
		cfg.Name, cfg.Key, cfg.Transport = name, testKey, transports[i]
		// A bound port would be a socket: the test is that there is none.
		cfg.BindAddr, cfg.Port = "192.0.2.1", 1
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		g, err := New(cfg, nodestate.NodeState{Static: nodestate.Static{Cores: 2}})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, g)
	}
	addr, port := nodes[0].LocalAddr()
	for _, g := range nodes[1:] {
		if err := g.Join(context.Background(), []string{fmt.Sprintf("%s:%d", addr, port)}); err != nil {
			t.Fatal(err)
		}
	}
	nodes[2].Update(func(s *nodestate.NodeState) { s.Dyn.Users = 7 })
	waitFor(t, 10*time.Second, "m2's change on every node", func() bool {
		for _, g := range nodes {
			if e, ok := g.Lookup("m2"); !ok || e.State.Dyn.Users != 7 || g.NumAlive() != 3 {
				return false
			}
		}
		return true
	})
}
