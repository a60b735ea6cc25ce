package probeplan

import (
	"fmt"
	"time"
)

// Probe process states as a node reports them.
const (
	StateStarting = "starting" // launched, no heartbeat yet
	StateRunning  = "running"  // heartbeats arriving
	StateExited   = "exited"   // the process ended; waiting for the leader's relaunch order
)

// ProbeView is what the leader knows of one probe process: the node's
// gossiped report and the desired state in raft.
type ProbeView struct {
	Node, Kind string
	// State, Running (the generation the node runs) and Beat (the last
	// heartbeat, the node's unix ms) come from gossip.
	State   string
	Running uint64
	Beat    int64
	// Desired is raft's generation; LastRestart when raft last ordered a
	// relaunch (zero: never).
	Desired     uint64
	LastRestart time.Time
}

// Restart is a relaunch the leader should record in raft: a
// compare-and-swap on Generation.
type Restart struct {
	Node, Kind, Reason string
	Generation         uint64
}

// SuperviseConfig tunes the leader's supervision of probe processes.
type SuperviseConfig struct {
	// StaleAfter: a probe whose heartbeat has not changed for this long
	// (on the leader's clock) is hung and relaunched. Default 15s.
	StaleAfter time.Duration
	// BackoffBase and BackoffMax: the first relaunch is immediate, each
	// further one of a probe that keeps failing waits twice as long,
	// starting at BackoffBase (default 1s), at most BackoffMax (default 1m).
	BackoffBase, BackoffMax time.Duration
	// StableAfter: a probe that lived this long since its last relaunch
	// starts its backoff over. Default 2m.
	StableAfter time.Duration
}

// DefaultSuperviseConfig returns the documented defaults.
func DefaultSuperviseConfig() SuperviseConfig {
	return SuperviseConfig{StaleAfter: 15 * time.Second, BackoffBase: time.Second, BackoffMax: time.Minute, StableAfter: 2 * time.Minute}
}

// Backoff is the wait before the streak-th relaunch in a row.
func (c SuperviseConfig) Backoff(streak int) time.Duration {
	if streak <= 1 {
		return 0
	}
	d := c.BackoffBase
	for i := 2; i < streak && d < c.BackoffMax; i++ {
		d *= 2
	}
	return min(d, c.BackoffMax)
}

// ProbeKey names one probe process: its node and kind.
type ProbeKey struct{ Node, Kind string }

// SeenBeat is the last report of a probe the leader saw change, and when
// (on the leader's clock).
type SeenBeat struct {
	Beat  int64
	Gen   uint64
	State string
	At    time.Time
}

// Supervisor is the leader's memory between supervision rounds: when it
// last saw each heartbeat change (its own clock, so node clocks may
// differ) and how many relaunches in a row each probe has had. It is a
// value that holds no clock and does no I/O: Decide returns the next
// memory and leaves its receiver as it was. The zero value is empty.
type Supervisor struct {
	Seen   map[ProbeKey]SeenBeat
	Streak map[ProbeKey]int
}

// Decide returns the relaunches due at now and the memory for the next
// round. views lists the probes of live nodes only: a dead node's probes
// are not relaunched (raft's remove_node drops them). A probe whose node
// has not yet caught up with raft's generation is left alone, so one
// failure is never counted twice.
func (s Supervisor) Decide(cfg SuperviseConfig, now time.Time, views []ProbeView) ([]Restart, Supervisor) {
	next := Supervisor{Seen: make(map[ProbeKey]SeenBeat, len(views)), Streak: map[ProbeKey]int{}}
	var out []Restart
	for _, v := range views {
		k := ProbeKey{v.Node, v.Kind}
		if n, ok := s.Streak[k]; ok {
			next.Streak[k] = n
		}
		sb, ok := next.Seen[k]
		if !ok {
			sb, ok = s.Seen[k]
		}
		if !ok || sb.Beat != v.Beat || sb.Gen != v.Running || sb.State != v.State {
			sb = SeenBeat{Beat: v.Beat, Gen: v.Running, State: v.State, At: now}
		}
		next.Seen[k] = sb
		if v.Running != v.Desired {
			continue
		}
		var reason string
		switch quiet := now.Sub(sb.At); {
		case v.State == StateExited:
			reason = "process exited"
		case quiet >= cfg.StaleAfter:
			reason = fmt.Sprintf("no heartbeat for %s", quiet.Round(time.Second))
		default:
			continue
		}
		streak := 1
		if !v.LastRestart.IsZero() && now.Sub(v.LastRestart) < cfg.StableAfter {
			streak = next.Streak[k] + 1
		}
		if !v.LastRestart.IsZero() && now.Before(v.LastRestart.Add(cfg.Backoff(streak))) {
			continue // backing off: it keeps failing
		}
		next.Streak[k] = streak
		out = append(out, Restart{Node: v.Node, Kind: v.Kind, Reason: reason, Generation: v.Desired})
	}
	return out, next
}
