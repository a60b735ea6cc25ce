package agent

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/raftnode"
	"github.com/shoal-hpc/shoal/gossip"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// startRaft starts this node's raft (agent/raftnode) over the raft
// listener, with the agent's TLS trust and certificate.
func (a *Agent) startRaft() error {
	a.fsm = raftfsm.New()
	a.appliedLeader, a.appliedJobs = make(chan struct{}, 1), make(chan struct{}, 1)
	t := a.cfg.Raft
	n, err := raftnode.Start(raftnode.Config{
		ID: a.cfg.Name, Dir: filepath.Join(a.cfg.DataDir, "raft"),
		Timings:  raftnode.Timings{HeartbeatTimeout: t.HeartbeatTimeout, ElectionTimeout: t.ElectionTimeout, LeaderLeaseTimeout: t.LeaderLeaseTimeout, CommitTimeout: t.CommitTimeout},
		Listener: a.raftLn, Advertise: &net.TCPAddr{IP: net.ParseIP(a.advertiseIP()), Port: a.RaftPort()},
		Roots: a.tls.roots, Leaf: a.tls.leaf,
		FSM: a.fsm, Wake: []chan struct{}{a.appliedLeader, a.appliedJobs}, Logger: a.log,
	})
	if err != nil {
		return err
	}
	a.node, a.raft, a.leaderCh = n, n.Raft, n.LeaderCh
	return nil
}

// raftAddrOf is a node's raft address from its gossiped state.
// TODO(#20 merge): callers may use raftnode.Addr directly.
func raftAddrOf(s gossip.NodeState) string { return raftnode.Addr(s) }

// leaderLoop runs the leader's reconcilers for as long as this node leads.
func (a *Agent) leaderLoop(ctx context.Context) {
	var stop context.CancelFunc
	for {
		select {
		case <-ctx.Done():
			if stop != nil {
				stop()
			}
			return
		case isLeader := <-a.leaderCh:
			if stop != nil {
				stop()
				stop = nil
			}
			if !isLeader {
				a.log.Info("lost raft leadership")
				continue
			}
			a.log.Info("gained raft leadership")
			var lctx context.Context
			lctx, stop = context.WithCancel(ctx)
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				a.lead(lctx)
			}()
		}
	}
}

// lead runs while this node is leader. It first waits for every entry of
// earlier terms to be applied (Barrier), so decisions read a current FSM.
// Membership and every leader hook (jobs, probes) run in loops of their
// own: a slow round of one (a probe relaunch storm on a loaded machine)
// must not starve the others.
func (a *Agent) lead(ctx context.Context) {
	if err := a.raft.Barrier(5 * time.Second).Error(); err != nil {
		a.log.Warn("barrier after gaining leadership", "err", err)
		return
	}
	hooks := append([]func(context.Context){func(context.Context) { a.reconcileMembership() }}, a.leaderHooks...)
	wakes := make([]chan struct{}, len(hooks))
	var wg sync.WaitGroup
	for i, fn := range hooks {
		wakes[i] = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				fn(ctx)
				select {
				case <-ctx.Done():
					return
				case <-wakes[i]:
				}
			}
		}()
	}
	defer wg.Wait()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.gossip.Changed():
		case <-a.appliedLeader:
		}
		for _, w := range wakes {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
}

func (a *Agent) reconcileMembership() {
	f := a.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	var servers []server
	for _, s := range f.Configuration().Servers {
		servers = append(servers, server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	var members []memberView
	for _, e := range a.gossip.Nodes() {
		members = append(members, memberView{Name: e.State.Name, RaftAddr: raftAddrOf(e.State), Status: e.Status, Since: e.Since})
	}
	for _, act := range planMembership(a.cfg.Name, servers, members, a.cfg.voters(), a.cfg.DeadVoterGrace, time.Now()) {
		var err error
		id, addr := raft.ServerID(act.ID), raft.ServerAddress(act.Addr)
		switch act.Kind {
		case actAdd:
			err = a.raft.AddNonvoter(id, addr, 0, 5*time.Second).Error()
		case actPromote:
			err = a.raft.AddVoter(id, addr, 0, 5*time.Second).Error()
		case actDemote:
			err = a.raft.DemoteVoter(id, 0, 5*time.Second).Error()
		case actRemove:
			err = a.raft.RemoveServer(id, 0, 5*time.Second).Error()
		}
		if err != nil {
			a.log.Warn("raft membership change failed", "action", act.Kind, "server", act.ID, "err", err)
			return
		}
		a.log.Info("raft membership changed", "action", act.Kind, "server", act.ID, "why", act.Why)
	}
}

// Role returns a node's raft role: leader, voter, nonvoter or none.
func (a *Agent) roles() map[string]string {
	out := map[string]string{}
	f := a.raft.GetConfiguration()
	if f.Error() != nil {
		return out
	}
	_, leaderID := a.raft.LeaderWithID()
	for _, s := range f.Configuration().Servers {
		switch {
		case s.ID == leaderID:
			out[string(s.ID)] = "leader"
		case s.Suffrage == raft.Voter:
			out[string(s.ID)] = "voter"
		default:
			out[string(s.ID)] = "nonvoter"
		}
	}
	return out
}
