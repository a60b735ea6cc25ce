package agent

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/raftfsm"
)

func (a *Agent) startRaft() error {
	dir := filepath.Join(a.cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create raft dir: %w", err)
	}
	hl := raftLogger(a.log)
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		return fmt.Errorf("open raft store %s: %w", filepath.Join(dir, "raft.db"), err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hl)
	if err != nil {
		bolt.Close()
		return fmt.Errorf("open snapshot store: %w", err)
	}
	logs, err := raft.NewLogCache(512, bolt)
	if err != nil {
		bolt.Close()
		return fmt.Errorf("raft log cache: %w", err)
	}
	adv := &net.TCPAddr{IP: net.ParseIP(a.advertiseIP()), Port: a.RaftPort()}
	a.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: newTLSStream(a.raftLn, adv, a.tls), MaxPool: 3, Timeout: 10 * time.Second, Logger: hl,
	})

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(a.cfg.Name)
	rc.Logger = hl
	rc.HeartbeatTimeout = a.cfg.Raft.HeartbeatTimeout
	rc.ElectionTimeout = a.cfg.Raft.ElectionTimeout
	rc.LeaderLeaseTimeout = a.cfg.Raft.LeaderLeaseTimeout
	rc.CommitTimeout = a.cfg.Raft.CommitTimeout
	rc.SnapshotThreshold = 2048
	rc.TrailingLogs = 4096
	// A buffered NotifyCh: LeaderCh drops transitions when nobody reads.
	ch := make(chan bool, 32)
	rc.NotifyCh, a.leaderCh = ch, ch

	a.fsm = raftfsm.New()
	a.appliedLeader, a.appliedJobs = make(chan struct{}, 1), make(chan struct{}, 1)
	fsm := &notifyingFSM{FSM: a.fsm, wake: []chan struct{}{a.appliedLeader, a.appliedJobs}}
	a.stable = &guardedStable{s: bolt}
	r, err := raft.NewRaft(rc, fsm, logs, a.stable, snaps, a.trans)
	if err != nil {
		bolt.Close()
		return fmt.Errorf("start raft: %w", err)
	}
	a.raft, a.bolt = r, bolt
	return nil
}

// raftMember reports whether this node is part of a raft configuration.
func (a *Agent) raftMember() bool {
	f := a.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	return len(f.Configuration().Servers) > 0
}

// bootstrapLoop publishes this node's raft standing in gossip and, while it
// has none, bootstraps the cluster once bootstrap-expect agents agree.
func (a *Agent) bootstrapLoop(ctx context.Context) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var published []string
	for {
		if a.raftMember() {
			a.gossip.Update(func(s *gossip.NodeState) { s.Raft = gossip.RaftInfo{Member: true} })
			return
		}
		views := a.bootViews()
		prop := bootstrapProposal(views, a.cfg.BootstrapExpect)
		if !slices.Equal(prop, published) {
			a.gossip.Update(func(s *gossip.NodeState) { s.Raft.Proposal = prop })
			published = prop
			views = a.bootViews()
		}
		if bootstrapReady(a.cfg.Name, views, prop) {
			a.bootstrap(views, prop)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.gossip.Changed():
		}
	}
}

func (a *Agent) bootstrap(views []bootView, prop []string) {
	var conf raft.Configuration
	for _, v := range views {
		if slices.Contains(prop, v.Name) {
			conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(v.Name), Address: raft.ServerAddress(v.RaftAddr), Suffrage: raft.Voter})
		}
	}
	slices.SortFunc(conf.Servers, func(x, y raft.Server) int { return cmpStr(string(x.ID), string(y.ID)) })
	if err := a.raft.BootstrapCluster(conf).Error(); err != nil && err != raft.ErrCantBootstrap {
		a.log.Error("bootstrap raft", "err", err)
		return
	}
	a.log.Info("bootstrapped raft cluster", "voters", prop)
}

func cmpStr(x, y string) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func (a *Agent) bootViews() []bootView {
	var out []bootView
	for _, e := range a.gossip.Nodes() {
		if !e.HasState {
			continue
		}
		out = append(out, bootView{
			Name: e.State.Name, Alive: e.Status == gossip.StatusAlive,
			RaftAddr: raftAddrOf(e.State), Member: e.State.Raft.Member, Proposal: e.State.Raft.Proposal,
		})
	}
	return out
}

func raftAddrOf(s gossip.NodeState) string {
	if s.Addr == "" || s.RaftPort == 0 {
		return ""
	}
	return net.JoinHostPort(s.Addr, strconv.Itoa(s.RaftPort))
}
