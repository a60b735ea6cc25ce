package gossip

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			why := ""
			for _, f := range explain {
				why += " (" + f() + ")"
			}
			t.Fatalf("timed out after %v waiting for %s%s", d, what, why)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

func startNode(t testing.TB, name string, port int, key []byte, boot int64) *Gossip {
	t.Helper()
	cfg := TestConfig()
	cfg.Name, cfg.Port, cfg.Key = name, port, key
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	g, err := New(cfg, nodestate.NodeState{Boot: boot, Static: nodestate.Static{Cores: 4, Threads: 8}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func statusOf(g *Gossip, name string) nodestate.Status {
	for _, e := range g.Nodes() {
		if e.State.Name == name {
			return e.Status
		}
	}
	return ""
}

func TestGossipLifecycle(t *testing.T) {
	t.Parallel()
	nodes := joinedCluster(t, 4, "g")
	defer shutdownAll(nodes)
	waitFor(t, 10*time.Second, "every node to hold 4 states", func() bool {
		for _, g := range nodes {
			n := 0
			for _, e := range g.Nodes() {
				if e.HasState && e.Status == nodestate.StatusAlive {
					n++
				}
			}
			if n != 4 {
				return false
			}
		}
		return true
	})

	nodes[2].Update(func(s *nodestate.NodeState) { s.Dyn.Users = 42 })
	waitFor(t, 5*time.Second, "the update to reach everyone", func() bool {
		for _, g := range nodes {
			if e, _ := g.Node("g2"); e.State.Dyn.Users != 42 {
				return false
			}
		}
		return true
	})

	// g3 leaves gracefully: left. g2 is killed: dead.
	_, port2 := nodes[2].LocalAddr()
	if err := nodes[3].Leave(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	nodes[3].Shutdown()
	nodes[2].Shutdown()
	waitFor(t, 15*time.Second, "g3 left and g2 dead on g0", func() bool {
		return statusOf(nodes[0], "g3") == nodestate.StatusLeft && statusOf(nodes[0], "g2") == nodestate.StatusDead
	}, func() string { return fmt.Sprintf("g3 %s, g2 %s", statusOf(nodes[0], "g3"), statusOf(nodes[0], "g2")) })

	// g2 comes back on the same port with a new life: alive, new state wins.
	nodes[2] = startNode(t, "g2", port2, testKey, time.Now().UnixNano())
	_, port0 := nodes[0].LocalAddr()
	if err := nodes[2].Join(context.Background(), []string{fmt.Sprintf("127.0.0.1:%d", port0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "g2 alive again with its new state", func() bool {
		e, _ := nodes[1].Node("g2")
		return statusOf(nodes[1], "g2") == nodestate.StatusAlive && e.State.Dyn.Users == 0 && e.State.Boot == nodes[2].Self().Boot
	})
}

func TestGossipWrongKeyCannotJoin(t *testing.T) {
	t.Parallel()
	a := startNode(t, "k1", 0, []byte("0123456789abcdef"), 0)
	defer a.Shutdown()
	b := startNode(t, "k2", 0, []byte("fedcba9876543210"), 0)
	defer b.Shutdown()
	_, port := a.LocalAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := b.Join(ctx, []string{fmt.Sprintf("127.0.0.1:%d", port)}); err == nil {
		t.Fatal("a node with the wrong gossip key joined the cluster")
	}
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

// joinedCluster starts n encrypted gossip nodes named prefix0.. and joins
// them through the first.
func joinedCluster(t *testing.T, n int, prefix string) []*Gossip {
	t.Helper()
	var nodes []*Gossip
	for i := range n {
		nodes = append(nodes, startNode(t, fmt.Sprintf("%s%d", prefix, i), 0, testKey, 0))
	}
	_, port0 := nodes[0].LocalAddr()
	for _, g := range nodes[1:] {
		if err := g.Join(context.Background(), []string{fmt.Sprintf("127.0.0.1:%d", port0)}); err != nil {
			shutdownAll(nodes)
			t.Fatal(err)
		}
	}
	return nodes
}

func shutdownAll(nodes []*Gossip) {
	for _, g := range nodes {
		g.Shutdown()
	}
}

// A death notice that lands while Nodes holds a members snapshot taken
// before it (read outside the table's lock) stands: the snapshot's stale
// "alive" does not bring the killed node back. Before SeenLive it did,
// for good, since memberlist tells nothing more of a dead node: a client
// of the 20-agent test kept a killed voter alive for minutes.
func TestNodesStaleSnapshotDoesNotReviveTheDead(t *testing.T) {
	t.Parallel()
	nodes := joinedCluster(t, 2, "stale")
	a, b := nodes[0], nodes[1]
	defer a.Shutdown()
	waitFor(t, 10*time.Second, "stale0 to see stale1 alive", func() bool { return statusOf(a, "stale1") == nodestate.StatusAlive })
	var once sync.Once
	hook := func() {
		once.Do(func() {
			// The snapshot just read lists stale1 alive; kill it and wait,
			// still inside this Nodes call, for memberlist's death notice.
			b.Shutdown()
			waitFor(t, 20*time.Second, "stale0's death notice of stale1", func() bool {
				a.mu.Lock()
				defer a.mu.Unlock()
				e, _ := a.table.Get("stale1")
				return e.Status == nodestate.StatusDead
			})
		})
	}
	a.afterMembers.Store(&hook)
	if st := statusOf(a, "stale1"); st != nodestate.StatusDead {
		t.Fatalf("stale1 is %q after a members snapshot older than its death notice, want dead", st)
	}
	a.afterMembers.Store(nil)
	if st := statusOf(a, "stale1"); st != nodestate.StatusDead {
		t.Fatalf("stale1 is %q on the next read, want dead", st)
	}
}

// TestIndexCountsChanges: a peer's update raises this node's change count,
// and a reader blocked on the count wakes.
func TestIndexCountsChanges(t *testing.T) {
	t.Parallel()
	nodes := joinedCluster(t, 2, "ix")
	defer shutdownAll(nodes)
	a, b := nodes[0], nodes[1]
	before, _ := a.Index()
	woke := make(chan uint64, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { woke <- a.WaitIndex(ctx, before) }()
	b.Update(func(s *nodestate.NodeState) { s.Dyn.Users = 7 })
	if v := <-woke; v <= before {
		t.Fatalf("the count stayed at %d after a peer's update", v)
	}
}
