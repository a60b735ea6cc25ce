package probe

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

type probeKey struct{ node, kind string }

type seenBeat struct {
	beat  int64
	gen   uint64
	state string
	at    time.Time
}

// Supervisor is the leader's memory between supervision rounds: when it
// last saw each heartbeat change (its own clock, so node clocks may
// differ) and how many relaunches in a row each probe has had. It holds
// no clock and does no I/O; a new leader starts with an empty one.
type Supervisor struct {
	cfg    SuperviseConfig
	seen   map[probeKey]seenBeat
	streak map[probeKey]int
}

// NewSupervisor returns an empty Supervisor.
func NewSupervisor(cfg SuperviseConfig) *Supervisor {
	return &Supervisor{cfg: cfg, seen: map[probeKey]seenBeat{}, streak: map[probeKey]int{}}
}

// Decide returns the relaunches due at now. views lists the probes of
// live nodes only: a dead node's probes are not relaunched (raft's
// remove_node drops them). A probe whose node has not yet caught up with
// raft's generation is left alone, so one failure is never counted twice.
func (s *Supervisor) Decide(now time.Time, views []ProbeView) []Restart {
	var out []Restart
	live := make(map[probeKey]bool, len(views))
	for _, v := range views {
		k := probeKey{v.Node, v.Kind}
		live[k] = true
		sb, ok := s.seen[k]
		if !ok || sb.beat != v.Beat || sb.gen != v.Running || sb.state != v.State {
			sb = seenBeat{beat: v.Beat, gen: v.Running, state: v.State, at: now}
			s.seen[k] = sb
		}
		if v.Running != v.Desired {
			continue
		}
		var reason string
		switch quiet := now.Sub(sb.at); {
		case v.State == StateExited:
			reason = "process exited"
		case quiet >= s.cfg.StaleAfter:
			reason = fmt.Sprintf("no heartbeat for %s", quiet.Round(time.Second))
		default:
			continue
		}
		streak := 1
		if !v.LastRestart.IsZero() && now.Sub(v.LastRestart) < s.cfg.StableAfter {
			streak = s.streak[k] + 1
		}
		if !v.LastRestart.IsZero() && now.Before(v.LastRestart.Add(s.cfg.Backoff(streak))) {
			continue // backing off: it keeps failing
		}
		s.streak[k] = streak
		out = append(out, Restart{Node: v.Node, Kind: v.Kind, Reason: reason, Generation: v.Desired})
	}
	for k := range s.seen {
		if !live[k] {
			delete(s.seen, k)
			delete(s.streak, k)
		}
	}
	return out
}
