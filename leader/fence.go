package leader

import (
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// FenceConfig is how long a node may run its attempts without word from
// the leader, and how long the leader therefore waits before it retries
// the attempts of a node it lost.
//
// A node renews a lease with the leader while it holds attempts; a node
// that has not renewed within Lease (a paused process, a partition, a
// stalled machine) has its attempts frozen on the spot by a guard process
// that does not share the agent's fate. The leader, counting on its own
// clock from the last renewal it answered (or from when it began to lead,
// for renewals an earlier leader answered), retries a lost node's attempts
// only after Wait: by then the node's guard has surely fenced them, even
// on a clock that runs slower than the leader's by ClockRate.
type FenceConfig struct {
	// Lease is how long one renewal lets a node run its attempts, on the
	// node's clock. 0 turns fencing off: a lost node's attempts are
	// retried as soon as gossip declares it dead. Default 4s (agent).
	Lease time.Duration
	// ClockRate bounds how much slower a node's clock may run than the
	// leader's, as a fraction (0.01 is 1%). Default 0.05.
	ClockRate float64
	// Slack covers what the lease does not: the guard's polling period
	// and a loaded machine's delay in running it. Default 1s.
	Slack time.Duration
}

// Wait is how long after the last renewal the leader may assume the
// node's lease has lapsed and its attempts are fenced: Lease stretched by
// ClockRate, plus Slack. 0 when fencing is off.
func (c FenceConfig) Wait() time.Duration {
	if c.Lease <= 0 {
		return 0
	}
	return time.Duration(float64(c.Lease)*(1+c.ClockRate)) + c.Slack
}

// leaseLapse is when the leases of every node in nodes have surely lapsed,
// on the leader's clock: Wait after the latest of their last renewals
// this leader answered and the start of its leadership (an earlier
// leader may have renewed them just before it lost office). A node that
// renewed a longer lease than the leader's own is waited for that long.
// The zero time when fencing is off for all of them.
func leaseLapse(v View, nodes []string) time.Time {
	var lapse time.Time
	for _, n := range nodes {
		c, r := v.Config.Fence, v.Heard[n]
		c.Lease = max(c.Lease, r.Lease)
		wait := c.Wait()
		if wait <= 0 {
			continue
		}
		from := v.LeadingSince
		if r.At.After(from) {
			from = r.At
		}
		if t := from.Add(wait); t.After(lapse) {
			lapse = t
		}
	}
	return lapse
}

// Renewal is one lease renewal of a node, as the leader answered it.
type Renewal struct {
	// At is when the leader answered it, on its clock.
	At time.Time
	// Applied is the raft index the node's state had applied when it
	// asked: the node knows of every attempt that ended at or below it.
	Applied uint64
	// Lease is the lease the node runs under (its own configuration).
	Lease time.Duration
}

// unfencedLost is why job j's retry waits, "" when it need not: a node
// its last attempt lost may still run that attempt's processes. A head
// that loses a node mid-run fails the attempt at once, before gossip
// declares the node dead, so the retry may not start until each lost node
// either has applied the attempt's end (it renewed its lease since, and
// its reconciler ends the processes) or has surely been fenced.
func unfencedLost(v View, j *raftfsm.Job) string {
	if len(j.Attempts) == 0 {
		return ""
	}
	last := &j.Attempts[len(j.Attempts)-1]
	if last.State != raftfsm.StateFailed {
		return ""
	}
	for _, n := range last.Lost {
		if r, ok := v.Heard[n]; ok && last.FailedIndex > 0 && r.Applied >= last.FailedIndex {
			continue
		}
		if lapse := leaseLapse(v, []string{n}); v.Now.Before(lapse) {
			return fmt.Sprintf("waiting for node %s, lost by attempt %d, to be fenced: its lease lapses by %s",
				n, last.N, lapse.UTC().Format(time.RFC3339))
		}
	}
	return ""
}
