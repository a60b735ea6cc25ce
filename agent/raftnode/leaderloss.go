package raftnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// A follower of hashicorp/raft notices a silent leader only when its
// heartbeat timer fires, at a random moment between one and two heartbeat
// timeouts after the timer's previous firing, and a voter that still
// believes in a leader refuses every (pre-)vote. After a leader dies, the
// first survivor whose timer fires is refused by the others and waits a
// whole election timeout; the election is won only when a second
// survivor's timer has fired too. With a 250 ms timeout that took 0.5–0.7 s
// on a quiet machine, most of it the timers' random slack.
//
// The leader-loss watcher removes that slack when the leader's process is
// gone, without changing what raft decides: it looks at the follower's
// last contact with its leader a few times per heartbeat timeout, and once
// the silence has lasted a heartbeat timeout plus this voter's stagger it
// dials the leader's raft port. A refused connection means no process
// listens there any more (killed, crashed, stopped): the watcher asks raft
// to check its heartbeat at once (a reload of its reloadable configuration,
// which is how raft lets a shortened timeout take effect), and raft makes
// its own decision by its own rule, on the same silence it would have
// acted on at its timer's next firing. A connection the leader's kernel
// accepts means its process lives but is slow (a starved machine): acting
// on every such silence elected leaders in a soak with no fault, so the
// watcher leaves it to raft's timer, as it does a dial that times out (a
// dead machine or a cut link). The stagger orders the surviving voters by
// ID, one step apart, so that one has dropped its leader before the next
// asks for votes; without it both would campaign at once and split the
// vote.

// LeaderLossStep is the stagger between two voters' checks: longer than a
// pre-vote's round trip on a busy machine, short against the timeout.
func LeaderLossStep(heartbeat time.Duration) time.Duration { return heartbeat / 5 }

// leaderLossPoll is how often the watcher looks at the last contact.
func leaderLossPoll(heartbeat time.Duration) time.Duration { return heartbeat / 10 }

// LeaderLossDue reports whether a follower whose last contact with its
// leader was at last should have raft check its heartbeat now: the silence
// has lasted the heartbeat timeout plus rank steps. A zero last contact
// (none yet) is never due: raft's own timer handles a node that has not
// heard a leader.
func LeaderLossDue(now, last time.Time, heartbeat time.Duration, rank int) bool {
	if last.IsZero() {
		return false
	}
	return now.Sub(last) >= heartbeat+time.Duration(rank)*LeaderLossStep(heartbeat)
}

// LeaderLossRank is self's place among the voters of servers that would
// survive the leader, ordered by ID; -1 when self is not one of them (a
// non-voter never campaigns, and the leader does not watch itself).
func LeaderLossRank(servers []raft.Server, self, leader raft.ServerID) int {
	var ids []raft.ServerID
	for _, s := range servers {
		if s.Suffrage == raft.Voter && s.ID != leader {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return slices.Index(ids, self)
}

// WatchLeaderLoss runs the leader-loss watcher on r until ctx ends.
// heartbeat is raft's configured HeartbeatTimeout.
func WatchLeaderLoss(ctx context.Context, r *raft.Raft, self string, heartbeat time.Duration, log *slog.Logger) {
	if heartbeat <= 0 {
		return
	}
	tick := time.NewTicker(leaderLossPoll(heartbeat))
	defer tick.Stop()
	var kicked time.Time   // the last contact already acted on
	var nextDial time.Time // a leader that answered is dialled again a step later
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if r.State() != raft.Follower {
			continue
		}
		addr, leader := r.LeaderWithID()
		last := r.LastContact()
		if leader == "" || last.Equal(kicked) || !LeaderLossDue(time.Now(), last, heartbeat, 0) {
			continue
		}
		f := r.GetConfiguration() // through raft's main loop: only once the leader is silent
		if f.Error() != nil {
			continue
		}
		rank := LeaderLossRank(f.Configuration().Servers, raft.ServerID(self), leader)
		if !shouldDialLeader(time.Now(), last, kicked, nextDial, heartbeat, rank) {
			continue
		}
		if !leaderGone(dialLeader(ctx, string(addr), LeaderLossStep(heartbeat))) {
			// It answers, or the dial says nothing certain: raft's timer decides.
			nextDial = time.Now().Add(LeaderLossStep(heartbeat))
			continue
		}
		kicked = last
		log.Debug("raft: leader silent for a heartbeat timeout and its raft port refuses; checking now", "leader", leader,
			"silent", time.Since(last).Round(time.Millisecond), "rank", rank)
		if err := checkHeartbeatNow(r); err != nil {
			log.Warn("raft: cannot re-arm the heartbeat check; raft's own timer will notice the leader's silence", "err", err)
		}
	}
}

// shouldDialLeader is the watcher's decision on one look at a follower of
// the given rank (LeaderLossRank) whose last contact was at last: dial the
// leader when the silence is due for this rank, it is not the silence
// already acted on (kicked), and a leader that answered a dial of this
// silence has been left a step (nextDial).
func shouldDialLeader(now, last, kicked, nextDial time.Time, heartbeat time.Duration, rank int) bool {
	return rank >= 0 && !last.Equal(kicked) && !now.Before(nextDial) && LeaderLossDue(now, last, heartbeat, rank)
}

// leaderGone reads a dial of the leader's raft port: only a refused
// connection says that no process listens there. An accepted one is a
// live leader, and a timeout or an unreachable network says nothing
// certain about the process.
func leaderGone(dialErr error) bool { return errors.Is(dialErr, syscall.ECONNREFUSED) }

// dialLeader connects to the leader's raft address and hangs up; nil when
// something accepted the connection.
func dialLeader(ctx context.Context, addr string, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// checkHeartbeatNow makes a follower's raft check its last contact at once.
// raft re-arms a follower's heartbeat timer to fire immediately when a
// reload shortens the heartbeat timeout; a nanosecond shorter, then the
// configured value back, changes nothing else. raft refuses a heartbeat
// timeout below the leader lease, which is why Start keeps the lease
// under it (leaseUnderHeartbeat).
func checkHeartbeatNow(r *raft.Raft) error {
	rc := r.ReloadableConfig()
	shorter := rc
	shorter.HeartbeatTimeout -= time.Nanosecond
	if err := r.ReloadConfig(shorter); err != nil {
		return fmt.Errorf("shorten the heartbeat timeout: %w", err)
	}
	if err := r.ReloadConfig(rc); err != nil {
		return fmt.Errorf("restore the heartbeat timeout: %w", err)
	}
	return nil
}

// leaseUnderHeartbeat is the leader lease Start gives raft: the configured
// one, but at least a millisecond under the heartbeat timeout (and never
// under raft's 5 ms floor), so that checkHeartbeatNow may shorten the
// heartbeat timeout by a nanosecond. A leader steps down that much sooner
// when it loses its quorum: the safe direction.
func leaseUnderHeartbeat(lease, heartbeat time.Duration) time.Duration {
	return max(min(lease, heartbeat-time.Millisecond), 5*time.Millisecond)
}
