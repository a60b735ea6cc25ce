package jobrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/fence"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Self-fencing: while this node holds attempts it renews a lease with the
// leader every quarter lease, and writes each renewal's deadline, with the
// attempts' cgroup freezers and process groups, to the file the fence
// guard reads (agent/fence). A node that cannot renew in time (paused,
// partitioned, its agent hung) has its attempts frozen by the guard, and
// the leader, which waits a lease and a margin after the last renewal it
// answered before it retries a lost node's attempts (leader.FenceConfig),
// never runs a retry beside them.
//
// An agent that renews after its lease lapsed catches up to the state the
// leader had applied when it answered, and then lets an attempt go on
// (the new lease thaws what the guard froze) only if that state still has
// it live, at this attempt number, on this node. No retry of it can have
// started then: a retry follows a failure, which the caught-up state would
// hold, and a failure from now on waits for this node to apply it or for
// the new lease to lapse (leader.unfencedLost). Every other attempt the
// guard may have stopped is killed, and failed with retry if the state
// still has it live: the leader may have retried it already. A leader
// election that outlasts the lease thus pauses a healthy node's attempts
// rather than ending them.

// ErrNoLease is why this node starts no process of an attempt: its lease
// with the leader has lapsed, or was never renewed.
var ErrNoLease = errors.New("this node holds no lease from the leader")

// leaseState is this node's lease.
type leaseState struct {
	// renew serialises renewals, and the lapse handling between them.
	renew sync.Mutex

	mu sync.Mutex
	// until is when the lease lapses on the agent's clock; zero before
	// the first renewal.
	until time.Time
	// bootUntil is the same deadline as the guard reads it (fence.Now).
	bootUntil int64
	// sent is when the last renewal the leader answered was sent.
	sent time.Time
}

// fencing reports whether this node fences its attempts.
func (n *Node) fencing() bool { return n.cfg.Lease > 0 && n.d.RenewLease != nil }

func (n *Node) fenceDir() string { return filepath.Join(n.cfg.DataDir, "fence") }

// requireLease is nil while this node may start processes of attempts.
func (n *Node) requireLease() error {
	if !n.fencing() {
		return nil
	}
	n.lease.mu.Lock()
	defer n.lease.mu.Unlock()
	switch until := n.lease.until; {
	case until.IsZero():
		return fmt.Errorf("node %s: %w yet; it starts nothing until it renews", n.cfg.Name, ErrNoLease)
	case !time.Now().Before(until):
		return fmt.Errorf("node %s: %w (lapsed %v ago); it starts nothing until it renews", n.cfg.Name, ErrNoLease, time.Since(until).Round(time.Millisecond))
	}
	return nil
}

// startFence starts the guard and hands it a lapsed lease: nothing of an
// earlier life may run past its own lease, and nothing of this one starts
// before the first renewal. The attempts adopted from the earlier life
// (adopting) keep the deadline that life's last renewal gave them, which
// the leader counts on too: they run on until it, and are stopped by the
// guard after it unless this life has renewed by then.
func (n *Node) startFence(adopting bool) {
	if !n.fencing() {
		return
	}
	until := fence.Now()
	if adopting {
		if old, ok, err := fence.Read(n.fenceDir()); err == nil && ok && old.Until > until {
			until = old.Until
		}
	}
	n.lease.mu.Lock()
	n.lease.bootUntil = until // the guard's deadline only: requireLease still wants a renewal
	n.lease.mu.Unlock()
	if err := n.writeLease(); err != nil {
		n.log.Error("write the fence lease", "err", err)
	}
	if err := fence.EnsureGuard(n.cfg.Bin, n.fenceDir()); err != nil {
		n.log.Error("the node's attempts run without a fence guard", "err", err)
	}
}

// stopFence removes the lease, which ends the guard: the agent stops and
// has killed its attempts itself.
func (n *Node) stopFence() {
	if !n.fencing() {
		return
	}
	if err := fence.Remove(n.fenceDir()); err != nil {
		n.log.Warn("remove the fence lease", "err", err)
	}
}

// keepLease renews the lease every quarter lease while this node holds an
// attempt, until ctx ends.
func (n *Node) keepLease(ctx context.Context) {
	if !n.fencing() {
		return
	}
	tick := time.NewTicker(max(n.cfg.Lease/4, 10*time.Millisecond))
	defer tick.Stop()
	failing := false // one warning per run of failed renewals, not one a second
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !n.holdsAttempts() {
			continue
		}
		err := n.renewLease(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			n.log.Warn("renew the node's lease; its attempts are frozen if it cannot within the lease", "lease", n.cfg.Lease, "err", err)
			failing = true
		case err == nil && failing:
			n.log.Info("lease renewed again")
			failing = false
		}
	}
}

// holdsAttempts reports whether this node has anything a lease covers: a
// live attempt the state places here, or processes or cgroups of any.
func (n *Node) holdsAttempts() bool {
	if len(n.procs.keys()) > 0 || len(n.cgroupKeys()) > 0 || len(n.supervisedGroups()) > 0 {
		return true
	}
	held := false
	n.d.State.View(func(st *raftfsm.State) {
		for _, j := range st.Jobs {
			if a := j.Current(); a != nil && j.State.Live() && a.Holds(n.cfg.Name) {
				held = true
				return
			}
		}
	})
	return held
}

// renewLease renews the lease with the leader. A renewal answered after
// the previous lease lapsed does not extend it at once: the attempts the
// guard may have stopped meanwhile are settled first (settleLapsed), and
// only then is the new lease written, which thaws those that go on.
func (n *Node) renewLease(ctx context.Context) error {
	n.lease.renew.Lock()
	defer n.lease.renew.Unlock()
	return n.renewLocked(ctx)
}

// renewLeaseSince makes sure the leader answered a renewal sent at or
// after since, renewing only when none was: a reservation needs the
// leader to have heard from this node after it saw the placement, and the
// many reservations of an array's tasks that wait on one renewal in
// flight are all answered by the next, not each by one of its own (a
// thousand round trips to the leader, one after another, each confirming
// its leadership).
func (n *Node) renewLeaseSince(ctx context.Context, since time.Time) error {
	n.lease.renew.Lock()
	defer n.lease.renew.Unlock()
	n.lease.mu.Lock()
	fresh := !n.lease.sent.Before(since) && time.Now().Before(n.lease.until)
	n.lease.mu.Unlock()
	if fresh {
		return nil
	}
	return n.renewLocked(ctx)
}

// renewLocked is renewLease under lease.renew.
func (n *Node) renewLocked(ctx context.Context) error {
	sent, bootSent := time.Now(), fence.Now()
	rctx, cancel := context.WithTimeout(ctx, n.cfg.Lease)
	index, err := n.d.RenewLease(rctx)
	cancel()
	if err != nil {
		return err
	}
	n.lease.mu.Lock()
	lapsed := !time.Now().Before(n.lease.until) // the zero until: never renewed in this life
	n.lease.mu.Unlock()
	if lapsed {
		n.settleLapsed(ctx, index)
	}
	n.lease.mu.Lock()
	n.lease.until, n.lease.bootUntil, n.lease.sent = sent.Add(n.cfg.Lease), bootSent+int64(n.cfg.Lease), sent
	n.lease.mu.Unlock()
	if lapsed {
		// The guard leaves an hour after a lapse; the node holds attempts again.
		if err := fence.EnsureGuard(n.cfg.Bin, n.fenceDir()); err != nil {
			n.log.Error("the node's attempts run without a fence guard", "err", err)
		}
	}
	return n.writeLease()
}

// settleLapsed decides what becomes of the attempts with processes or
// cgroups on this node after its lease lapsed, the renewal that ends the
// lapse answered by a leader whose state had applied index. Once this
// node's state has caught up to index (within half a lease, so that the
// new lease, counted from the renewal's sending, still has half to run),
// an attempt it has
// live, current and held here goes on; the others, and all of them when
// the state does not catch up or the leader gave no index, end
// (endFencedAttempts).
func (n *Node) settleLapsed(ctx context.Context, index uint64) {
	keys := n.attemptsHere()
	if len(keys) == 0 {
		return
	}
	if index > 0 && n.caughtUp(ctx, index, n.cfg.Lease/2) {
		st := n.d.State.State()
		for k := range keys {
			j := liveAt(st, k)
			if j == nil {
				continue
			}
			if a := j.Current(); a != nil && a.Holds(n.cfg.Name) {
				n.log.Info("an attempt stopped by the node's lapsed lease goes on: the leader has not failed it", "job", k.Job, "attempt", k.Attempt, "index", index)
				delete(keys, k)
			}
		}
	}
	n.endFencedAttempts(ctx, keys)
}

// liveAt is attempt k's job when st has it live at that attempt number,
// else nil.
func liveAt(st *raftfsm.State, k Key) *raftfsm.Job {
	if j := st.Jobs[k.Job]; j != nil && j.State.Live() && j.Attempt == k.Attempt {
		return j
	}
	return nil
}

// attemptsHere is the attempts with processes or cgroups on this node.
func (n *Node) attemptsHere() map[Key]bool {
	keys := map[Key]bool{}
	for _, k := range n.procs.keys() {
		keys[k] = true
	}
	for _, k := range n.cgroupKeys() {
		keys[k] = true
	}
	for k := range n.supervisedGroups() {
		keys[k] = true
	}
	return keys
}

// caughtUp waits, up to within or ctx's end, until this node's state has
// applied index, and reports whether it has.
func (n *Node) caughtUp(ctx context.Context, index uint64, within time.Duration) bool {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		changed := n.d.State.Changed()
		if n.d.State.Index() >= index {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return n.d.State.Index() >= index
		case <-ctx.Done():
			return false
		}
	}
}

// endFencedAttempts fails the attempts keys that the state still has
// live, with retry, and then kills their processes: they ran past a
// lapsed lease. Failing first makes the outcome the attempt's head would
// report for the killed ranks (a plain failure) arrive too late to count.
func (n *Node) endFencedAttempts(ctx context.Context, keys map[Key]bool) {
	if len(keys) == 0 {
		return
	}
	st := n.d.State.State()
	for k := range keys {
		if liveAt(st, k) == nil {
			continue
		}
		b, err := raftfsm.Encode(raftfsm.CmdFailAttempt, n.now(), raftfsm.FailAttempt{ID: k.Job, Attempt: k.Attempt, Retry: true,
			Reason: fmt.Sprintf("node %s lost its lease with the leader under attempt %d: its processes there were stopped", n.cfg.Name, k.Attempt)})
		if err != nil {
			n.log.Error("encode fail_attempt", "err", err)
			continue
		}
		if _, err := n.d.Propose(ctx, b); err != nil {
			n.log.Warn("fail an attempt that ran past the node's lease", "job", k.Job, "attempt", k.Attempt, "err", err)
		}
	}
	for k := range keys {
		n.log.Warn("killing an attempt that ran past the node's lapsed lease", "job", k.Job, "attempt", k.Attempt)
		n.procs.kill(k, 0)
		if g, ok := n.supervisedGroups()[k]; ok {
			n.killGroup(g, 0)
		}
		n.endCgroup(ctx, k, 0, true)
	}
}

// writeLease hands the guard the lease and what it covers now. It is
// called after each renewal and whenever an attempt gets a cgroup or a
// process, before anything runs in it.
func (n *Node) writeLease() error {
	if !n.fencing() {
		return nil
	}
	n.lease.mu.Lock()
	defer n.lease.mu.Unlock() // one writer at a time: the file never goes back to older contents
	l := fence.Lease{Until: n.lease.bootUntil}
	n.cgroups.mu.Lock()
	for _, ac := range n.cgroups.live {
		file, freeze, thaw := ac.cg.Freezer()
		l.Freezers = append(l.Freezers, fence.Freezer{File: file, Freeze: freeze, Thaw: thaw})
	}
	n.cgroups.mu.Unlock()
	for _, k := range n.procs.keys() {
		l.Pgids = append(l.Pgids, n.procs.pids(k)...) // each a session leader: its pid is its group
	}
	for _, g := range n.supervisedGroups() {
		if !slices.Contains(l.Pgids, g) { // adopted: not in procs
			l.Pgids = append(l.Pgids, g)
		}
	}
	if err := fence.Write(n.fenceDir(), l); err != nil {
		return fmt.Errorf("hand the fence guard its lease: %w", err)
	}
	return nil
}

// leaseCovers hands the guard attempt k's new cgroup or process.
func (n *Node) leaseCovers(k Key) {
	if err := n.writeLease(); err != nil {
		n.log.Warn("the fence guard may not stop this attempt", "job", k.Job, "attempt", k.Attempt, "err", err)
	}
}

// awaitLease waits, up to two leases, for this node to hold a lease: the
// renewal loop may be a moment behind a placement.
func (n *Node) awaitLease(ctx context.Context) error {
	deadline := time.Now().Add(2 * n.cfg.Lease)
	tick := time.NewTicker(20 * time.Millisecond) // the polling period of a condition
	defer tick.Stop()
	for {
		err := n.requireLease()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
