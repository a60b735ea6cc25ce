package agent

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// Per-user limits (raftfsm.Limits) are replicated state: submit_job checks
// them against the log, so they hold cluster-wide however many agents a
// user submits through at once. Each agent's flags say what they should
// be; the leader writes its own into raft when they differ from the
// state's (after an election, or a restart with new flags). Give every
// agent the same flags: the current leader's win.

// DefaultPriority is a job's priority when it asks for none. Users may
// lower theirs; a priority above it jumps the queue of everyone else, so
// it takes an administrator (root over the socket, or the token).
const DefaultPriority = 0

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

// checkSubmit refuses at the API what the FSM would refuse anyway, without
// a trip through raft, and what only the API can judge: who may raise a
// job's priority. It returns the HTTP code and the reason, or 0.
func (a *Agent) checkSubmit(r *http.Request, sp *raftfsm.JobSpec) (int, string) {
	if sp.Priority > DefaultPriority && !privileged(r) {
		return http.StatusForbidden, fmt.Sprintf("priority %d is above the default %d, which only root or a holder of the cluster token may ask for; you may lower your job's priority (a negative --priority)", sp.Priority, DefaultPriority)
	}
	if err := raftfsm.ValidateSpec(*sp); err != nil {
		return http.StatusBadRequest, err.Error()
	}
	if err := a.cfg.Limits.CheckSpec(sp); err != nil {
		return http.StatusBadRequest, err.Error()
	}
	return 0, ""
}
