package twins

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/nodestate"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond) // the polling period of a condition
	}
}

func status(g *gossip.Gossip, name string) nodestate.Status {
	e, ok := g.Lookup(name)
	if !ok {
		return nodestate.StatusUnknown
	}
	return e.Status
}

// Three memberlists over the gossip twins: a partitioned node, then a
// disconnected one, is declared dead by the others and comes back alive
// once the network heals.
func TestGossipPartitionAndHeal(t *testing.T) {
	t.Parallel()
	n := NewNetwork()
	names := []string{"g0", "g1", "g2"}
	var nodes []*gossip.Gossip
	defer func() {
		for _, g := range nodes {
			g.Shutdown()
		}
	}()
	for _, name := range names {
		cfg := gossip.TestConfig()
		cfg.Name, cfg.Key, cfg.Transport = name, []byte("0123456789abcdef"), n.Gossip(name)
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		g, err := gossip.New(cfg, nodestate.NodeState{})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, g)
	}
	ip, port := nodes[0].LocalAddr()
	for _, g := range nodes[1:] {
		if err := g.Join(context.Background(), []string{net.JoinHostPort(ip, fmt.Sprint(port))}); err != nil {
			t.Fatal(err)
		}
	}
	alive := func(g *gossip.Gossip, name string) bool { return status(g, name) == nodestate.StatusAlive }
	waitFor(t, 10*time.Second, "all alive", func() bool { return alive(nodes[0], "g2") && alive(nodes[2], "g0") })

	n.Partition([]string{"g0", "g1"}, []string{"g2"})
	if n.Linked("g0", "g2") || !n.Linked("g0", "g1") {
		t.Fatal("Partition cut the wrong links")
	}
	waitFor(t, 30*time.Second, "g2 dead to g0 and g1, g1 alive to g0", func() bool {
		return status(nodes[0], "g2") == nodestate.StatusDead && status(nodes[1], "g2") == nodestate.StatusDead && alive(nodes[0], "g1")
	})
	n.Heal()
	waitFor(t, 30*time.Second, "g2 alive to all after the heal", func() bool {
		return alive(nodes[0], "g2") && alive(nodes[1], "g2") && alive(nodes[2], "g0")
	})

	n.Disconnect("g1")
	if n.Linked("g0", "g1") || n.Linked("g1", "g2") || !n.Linked("g0", "g2") {
		t.Fatal("Disconnect cut the wrong links")
	}
	waitFor(t, 30*time.Second, "g1 dead to g0 and g2", func() bool {
		return status(nodes[0], "g1") == nodestate.StatusDead && status(nodes[2], "g1") == nodestate.StatusDead && alive(nodes[0], "g2")
	})
	n.Heal()
	waitFor(t, 30*time.Second, "g1 alive to all after the heal", func() bool {
		return alive(nodes[0], "g1") && alive(nodes[2], "g1") && alive(nodes[1], "g0")
	})
}

// Three raft servers over the raft twins: the leader cut off loses its
// leadership, the two others elect one of them, and once healed the old
// leader follows and holds what was committed meanwhile. A restarted node
// finds its state in the twin's stores.
func TestRaftPartitionAndHeal(t *testing.T) {
	t.Parallel()
	n := NewNetwork()
	names := []string{"r0", "r1", "r2"}
	nodes := map[string]*raftnode.Node{}
	fsms := map[string]*raftfsm.FSM{}
	start := func(i int) {
		name := names[i]
		fsms[name] = raftfsm.New()
		nd, err := raftnode.Start(raftnode.Config{ID: name, Backend: n.Raft(name), FSM: fsms[name],
			Advertise: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 20000 + i},
			Timings: raftnode.Timings{HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond,
				LeaderLeaseTimeout: 150 * time.Millisecond, CommitTimeout: 20 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		nodes[name] = nd
	}
	stop := func(name string) {
		nodes[name].Raft.Shutdown().Error()
		nodes[name].CloseTransport()
		nodes[name].CloseStore()
		delete(nodes, name)
	}
	defer func() {
		for name := range nodes {
			stop(name)
		}
	}()
	var servers []raft.Server
	for i, name := range names {
		if n.Raft(name).HasState() {
			t.Fatalf("%s has raft state before its first start", name)
		}
		start(i)
		servers = append(servers, raft.Server{ID: raft.ServerID(name), Address: raft.ServerAddress(fmt.Sprintf("127.0.0.1:%d", 20000+i))})
	}
	if err := nodes["r0"].Raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	leader := func(among ...string) string {
		for _, name := range among {
			if nd := nodes[name]; nd != nil && nd.Raft.State() == raft.Leader {
				return name
			}
		}
		return ""
	}
	waitFor(t, 10*time.Second, "a leader", func() bool { return leader(names...) != "" })
	old := leader(names...)
	var rest []string
	for _, name := range names {
		if name != old {
			rest = append(rest, name)
		}
	}
	submit := func(on, req string) error {
		b, err := raftfsm.Encode(raftfsm.CmdSubmitJob, time.Now(), raftfsm.SubmitJob{RequestID: req, Owner: "u",
			Spec: raftfsm.JobSpec{Cmd: []string{"true"}, NP: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return nodes[on].Raft.Apply(b, time.Second).Error()
	}
	if err := submit(old, "before"); err != nil {
		t.Fatal(err)
	}

	n.Partition([]string{old}, rest)
	waitFor(t, 10*time.Second, "a new leader among the majority", func() bool { return leader(rest...) != "" })
	if err := submit(old, "minority"); err == nil {
		t.Fatal("the cut-off old leader committed a write")
	}
	if err := submit(leader(rest...), "majority"); err != nil {
		t.Fatal(err)
	}
	n.Heal()
	want := fsms[leader(rest...)].Index()
	waitFor(t, 10*time.Second, "the old leader caught up", func() bool { return fsms[old].Index() >= want })
	if len(fsms[old].State().Jobs) != 2 {
		t.Fatalf("the old leader holds %d jobs, want 2 (before, majority)", len(fsms[old].State().Jobs))
	}

	i := map[string]int{"r0": 0, "r1": 1, "r2": 2}[old]
	stop(old)
	if !n.Raft(old).HasState() {
		t.Fatalf("%s lost its raft state with its stop", old)
	}
	start(i)
	waitFor(t, 10*time.Second, "the restarted node replays its log", func() bool { return fsms[old].Index() >= want })
}
