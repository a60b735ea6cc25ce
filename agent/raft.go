package agent

import (
	"net"
	"path/filepath"
	"time"

	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/agent/replica"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// startRaft starts this node's raft (agent/raftnode) over the raft
// listener, with the agent's TLS trust and certificate.
func (a *Agent) startRaft() error {
	a.fsm = raftfsm.New()
	a.feed = replica.NewFeed(4096) // raft's TrailingLogs: a client as far behind as a server may be gets entries
	a.appliedLeader, a.appliedJobs = make(chan struct{}, 1), make(chan struct{}, 1)
	t := a.cfg.Raft
	n, err := raftnode.Start(raftnode.Config{
		ID: a.cfg.Name, Dir: filepath.Join(a.cfg.DataDir, "raft"),
		Timings:  raftnode.Timings{HeartbeatTimeout: t.HeartbeatTimeout, ElectionTimeout: t.ElectionTimeout, LeaderLeaseTimeout: t.LeaderLeaseTimeout, CommitTimeout: t.CommitTimeout},
		Listener: a.raftLn, Advertise: &net.TCPAddr{IP: net.ParseIP(a.advertiseIP()), Port: a.RaftPort()},
		Roots: a.tls.roots, Leaf: a.tls.leaf,
		FSM: a.fsm, Wake: []chan struct{}{a.appliedLeader, a.appliedJobs}, Logger: a.log,
		OnApply: a.feed.Applied, OnRestore: a.feed.Restored,
	})
	if err != nil {
		return err
	}
	a.node, a.raft, a.leaderCh = n, n.Raft, n.LeaderCh
	lag := max(5*time.Second, 3*t.HeartbeatTimeout)
	a.feed.SetHealth(func() error { return raftnode.Current(n.Raft, lag) })
	return nil
}
