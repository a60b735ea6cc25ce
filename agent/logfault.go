package agent

import (
	"time"

	"github.com/shoal-hpc/shoal/nodestate"
)

// A server whose raft log cannot be written (raftnode's Fault: a full or
// read-only disk) stops taking entries while it keeps answering. It says
// so everywhere a user or a monitor looks, and steps aside:
//   - GET /v1/health answers "unhealthy" with the reason, `shoal nodes`
//     shows it, and shoal_raft_log_writable is 0;
//   - reads of the replicated state are refused (503), so the CLI asks
//     another agent instead of taking a stale answer as current;
//   - it gossips the fault, the leader's autopilot finds it unhealthy and
//     demotes it from voter (a leader with the fault hands leadership
//     over first), and promotes it again only once the fault clears.
// Nothing needs doing to recover: once the disk has room, the probe and
// the leader's retried entries go through and the fault clears.

// logProbeEvery is how often the raft directory is probed with a write:
// a full disk shows within seconds even while no entry is written, for
// the cost of a small synced write.
const logProbeEvery = 3 * time.Second

// checkLogFault probes s's raft directory when due (last.probed) and
// returns its fault, "" when its log is writable; it records the fault
// for the API and the metrics and, on the leader, hands leadership to
// another voter while the fault lasts. Called from publishStanding's
// goroutine only.
func (a *Agent) checkLogFault(s *server, leader bool, now time.Time, last *standing) string {
	if now.Sub(last.probed) >= logProbeEvery {
		last.probed = now
		_ = s.node.Probe() // its outcome is part of Fault
	}
	fault := ""
	if err := s.node.Fault(); err != nil {
		fault = err.Error()
		if len(fault) > nodestate.MaxFaultLen {
			fault = fault[:nodestate.MaxFaultLen]
		}
	}
	switch old := a.LogFault(); {
	case fault != "" && old == "":
		a.log.Error("raft log cannot be written: this server reports unhealthy, refuses reads and steps down as voter until it can", "err", fault)
	case fault == "" && old != "":
		a.log.Info("raft log writable again", "was", old)
	}
	a.logFault.Store(&fault)
	if fault != "" && leader {
		// A leader that cannot write its log steps down at its next write;
		// with none coming it would lead on, and the leader is the one
		// server autopilot never demotes. Hand over now.
		go func() {
			if err := s.raft.LeadershipTransfer().Error(); err != nil {
				a.log.Warn("hand over leadership from a server that cannot write its raft log", "err", err)
			}
		}()
	}
	return fault
}

// LogFault says why this server's raft log cannot be written, "" when it
// can or on a client.
func (a *Agent) LogFault() string {
	if p := a.logFault.Load(); p != nil {
		return *p
	}
	return ""
}
