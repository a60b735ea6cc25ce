package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/agent/httpapi"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Per-user limits (raftfsm.Limits) are replicated state: submit_job checks
// them against the log, so they hold cluster-wide however many agents a
// user submits through at once. Each agent's flags say what they should
// be; the leader writes its own into raft when they differ from the
// state's (after an election, or a restart with new flags). Give every
// agent the same flags: the current leader's win.

// DefaultPriority is a job's priority when it asks for none; a higher one
// takes an administrator (httpapi checks it at submit).
const DefaultPriority = httpapi.DefaultPriority

// syncLimits is a leader hook: it proposes set_limits when the replicated
// limits differ from this agent's configuration.
func (a *Agent) syncLimits(ctx context.Context) {
	var cur raftfsm.Limits
	a.fsm.View(func(s *raftfsm.State) { cur = s.Limits })
	if cur == a.cfg.Limits {
		return
	}
	cmd, err := raftfsm.Encode(raftfsm.CmdSetLimits, time.Now(), raftfsm.SetLimits{Limits: a.cfg.Limits})
	if err != nil {
		a.log.Error("encode set_limits", "err", err)
		return
	}
	res, err := a.Apply(ctx, cmd)
	if err != nil || res.Err != "" {
		a.log.Warn("per-user limits not committed", "err", err, "refused", res.Err)
		return
	}
	a.log.Info("per-user limits set", "limits", fmt.Sprintf("%+v", a.cfg.Limits))
}
