package jobrun

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// A new life of the agent adopts the attempts whose supervisors an
// earlier life left (supervised.go). Before it settles its last life it
// reads every supervisor's records in the data directory: a supervisor
// still running (its pid and start time match) keeps its attempt, and so
// does one that recorded the job's end; node_restarted lists them all
// (NodeRestarted.Adopted) and leaves them running, so they are never
// started again. Then each is settled once:
//
//	supervisor alive, attempt still running here ─► wait for it, report its end
//	supervisor gone, its status recorded         ─► report that end
//	supervisor gone, no status                   ─► fail with retry, saying so
//	attempt ended or retried meanwhile           ─► kill what is left, report nothing
//
// The raft state is the arbiter of "once": an attempt's end is committed
// only while the attempt runs, and a supervisor's records go once raft has
// answered its end, so a later life never reports it again.

// adoption is what an earlier life's supervisor left of one attempt.
type adoption struct {
	k     Key
	dir   string
	state jobexec.State
	// err is why its records could not be read: the attempt is failed.
	err error
}

// findSupervised reads the supervisors' records an earlier life left. A
// supervisor that never wrote its record started nothing: its directory
// goes.
func (n *Node) findSupervised() map[Key]adoption {
	dirs, err := filepath.Glob(filepath.Join(n.cfg.DataDir, "jobs", "*", "*", "supervisor"))
	if err != nil {
		n.log.Warn("list the supervisors of an earlier life", "err", err)
	}
	out := map[Key]adoption{}
	for _, d := range dirs {
		k, ok := parseAttemptDir(filepath.Dir(d))
		if !ok {
			continue
		}
		st, err := jobexec.ReadState(d)
		if err == nil && st.Record == nil {
			_ = os.RemoveAll(d)
			continue
		}
		out[k] = adoption{k: k, dir: d, state: st, err: err}
	}
	return out
}

// claimAdopted readies the node for the attempts it adopts, before its
// last life is settled: none of them is launched again, an older attempt
// of their jobs is refused, and the running ones are covered by the lease
// and killed by the node's stop as its own.
func (n *Node) claimAdopted(found map[Key]adoption) {
	for k, a := range found {
		n.markLaunched(k)
		// Refused only when a newer attempt of the job was adopted before
		// this one (the table is this life's, still empty of launches):
		// the table keeps the newer, and adopt kills this stale attempt as
		// one the cluster no longer runs here.
		_ = n.procs.fence(k)
		if a.state.Alive {
			n.setSupervised(k, a.state.Record.Group())
		}
	}
}

// adoptedRefs lists the attempts of found for node_restarted.
func adoptedRefs(found map[Key]adoption) []raftfsm.AttemptRef {
	out := make([]raftfsm.AttemptRef, 0, len(found))
	for k := range found {
		out = append(out, raftfsm.AttemptRef{ID: k.Job, Attempt: k.Attempt})
	}
	slices.SortFunc(out, func(a, b raftfsm.AttemptRef) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out
}

// aliveKeys are the attempts of found whose supervisors still run.
func aliveKeys(found map[Key]adoption) map[Key]bool {
	out := map[Key]bool{}
	for k, a := range found {
		if a.state.Alive {
			out[k] = true
		}
	}
	return out
}

// adopt settles one adopted attempt, once this life has settled the last.
func (n *Node) adopt(ctx context.Context, a adoption) {
	k := a.k
	log := n.log.With("job", k.Job, "attempt", k.Attempt)
	running := false
	n.d.State.View(func(s *raftfsm.State) {
		if j := liveAt(s, k); j != nil && j.State == raftfsm.StateRunning && j.Current().Head == n.cfg.Name {
			running = true
		}
	})
	if !running {
		if a.state.Alive {
			// Not the cluster's any more (it may run again elsewhere, or
			// ran past the lease and was stopped by the fence guard): killed
			// outright, no handler of the job's left to run beside a retry.
			log.Warn("killing an attempt left running by an earlier life: the cluster has ended or retried it")
			n.killGroup(a.state.Record.Group(), 0)
			n.endCgroup(ctx, k, 0, false)
		}
		n.setSupervised(k, 0)
		n.forgetSupervisor(k)
		return
	}
	st, err := a.state, a.err
	if st.Alive {
		log.Info("adopted an attempt its supervisor kept running while the agent was away", "pid", st.Record.PID)
	}
	// Only a supervisor that has ended may have its attempt reported: one
	// taken for dead while it runs would be failed and retried beside
	// itself, unwatched.
	for err == nil && st.Alive {
		if jobexec.WaitExit(*st.Record, ctx.Done()) != nil {
			return // stopping again: the next life adopts it
		}
		st, err = jobexec.ReadState(a.dir)
	}
	n.setSupervised(k, 0)
	var typ string
	var body any
	switch {
	case err == nil && st.Status != nil:
		code := st.Status.ExitCode
		if code != 0 {
			n.reportOOM(ctx, k)
		}
		log.Info("adopted attempt exited", "code", code)
		typ, body = raftfsm.CmdFinishAttempt, raftfsm.FinishAttempt{ID: k.Job, Attempt: k.Attempt, ExitCode: &code}
	default:
		reason := fmt.Sprintf("the supervisor of attempt %d on %s ended without recording how the job ended", k.Attempt, n.cfg.Name)
		if err != nil {
			reason = fmt.Sprintf("the records of attempt %d's supervisor on %s are unreadable: %v", k.Attempt, n.cfg.Name, err)
		}
		log.Warn("adopted attempt failed", "reason", reason)
		typ, body = raftfsm.CmdFailAttempt, raftfsm.FailAttempt{ID: k.Job, Attempt: k.Attempt, Retry: true, Reason: reason}
	}
	n.reportOutcome(ctx, log, k, typ, body)
}
