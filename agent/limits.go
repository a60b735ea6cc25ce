package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
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

// limitSync is a leader hook: each round it proposes set_limits, with
// apply, when the replicated limits differ from want (this agent's
// configuration).
func limitSync(fsm *raftfsm.FSM, apply func(context.Context, []byte) (api.ApplyResult, error), want raftfsm.Limits, log *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		var cur raftfsm.Limits
		fsm.View(func(s *raftfsm.State) { cur = s.Limits })
		if cur == want {
			return
		}
		cmd, err := raftfsm.Encode(raftfsm.CmdSetLimits, time.Now(), raftfsm.SetLimits{Limits: want})
		if err != nil {
			log.Error("encode set_limits", "err", err)
			return
		}
		res, err := apply(ctx, cmd)
		if err != nil || res.Err != "" {
			log.Warn("per-user limits not committed", "err", err, "refused", res.Err)
			return
		}
		log.Info("per-user limits set", "limits", fmt.Sprintf("%+v", want))
	}
}
