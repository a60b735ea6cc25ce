package raftfsm

import (
	"fmt"
	"slices"
	"time"
)

// Result is what Apply returns through raft's ApplyFuture.Response. Err is an error value, not a
// panic: the proposer tests it with errors.Is (or sends Code(Err) over the wire).
type Result struct {
	// Index is the raft log index of the command (0 when applied to a State directly).
	Index uint64
	// JobID is the job the command created or acted on.
	JobID uint64
	// Attempt is the job's current attempt after the command.
	Attempt int
	// JobIDs lists, sorted, the jobs whose attempt remove_node or node_restarted failed, or the jobs purge_jobs removed.
	JobIDs []uint64
	// Noop is true when the command repeated a change already in the state (a re-proposal).
	Noop bool
	Err  error
	// Results are a batch's: one per command it applied, in order (batch.go).
	Results []Result
}

// Apply applies one decoded command to s. On error s is unchanged: handlers build new copies of
// what they change and commit them only at the end.
func (s *State) Apply(c Command) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Err: fmt.Errorf("%w: %s: %v", ErrInternal, c.Type, r)}
		}
	}()
	if s.Jobs == nil || s.Probes == nil || s.byRequest == nil {
		s.initMaps()
	}
	res = s.apply(c)
	if res.Err == nil && !res.Noop && slices.Contains(finishing, c.Type) {
		s.keepFinished(res)
	}
	return res
}

func (s *State) apply(c Command) Result {
	switch c.Type {
	case CmdSubmitJob:
		return applyBody(s, c, (*State).submit)
	case CmdPlaceJob:
		res := applyBody(s, c, (*State).place)
		s.recordPlacedIndex(res, c.Index)
		return res
	case CmdAckReservation:
		return applyBody(s, c, (*State).ack)
	case CmdStartJob:
		return applyBody(s, c, (*State).start)
	case CmdFinishAttempt:
		return applyBody(s, c, (*State).finish)
	case CmdFailAttempt:
		res := applyBody(s, c, (*State).fail)
		s.recordFailedIndex(res, c.Index)
		return res
	case CmdRejectJob:
		return applyBody(s, c, (*State).reject)
	case CmdKillJob:
		return applyBody(s, c, (*State).kill)
	case CmdSetProbeDuties:
		return applyBody(s, c, (*State).setProbeDuties)
	case CmdProbeRestart:
		return applyBody(s, c, (*State).probeRestart)
	case CmdSetSettings:
		return applyBody(s, c, (*State).setSettings)
	case CmdRemoveNode:
		return applyBody(s, c, (*State).removeNode)
	case CmdReportProgress:
		return applyBody(s, c, (*State).reportProgress)
	case CmdResizeJob:
		return applyBody(s, c, (*State).resize)
	case CmdPurgeJobs:
		return applyBody(s, c, (*State).purge)
	case CmdSetLimits:
		return applyBody(s, c, (*State).setLimits)
	case CmdSetWaitReason:
		return applyBody(s, c, (*State).setWaitReason)
	case CmdNodeRestarted:
		return applyBody(s, c, (*State).nodeRestarted)
	case CmdSetSwitches:
		return applyBody(s, c, (*State).setSwitches)
	case CmdDrainNode:
		return applyBody(s, c, (*State).drainNode)
	case CmdUndrainNode:
		return applyBody(s, c, (*State).undrainNode)
	case CmdPurgeHistory:
		return applyBody(s, c, (*State).purgeHistory)
	case CmdHoldJob:
		return applyBody(s, c, (*State).hold)
	case CmdUpdateJob:
		return applyBody(s, c, (*State).updateJob)
	case CmdSetPartition:
		return applyBody(s, c, (*State).setPartition)
	case CmdDelPartition:
		return applyBody(s, c, (*State).deletePartition)
	case CmdRequeueJob:
		return applyBody(s, c, (*State).requeue)
	case CmdRecordUsage:
		return applyBody(s, c, (*State).recordUsage)
	case CmdRecordStep:
		return applyBody(s, c, (*State).recordStep)
	case CmdBatch:
		return s.applyBatch(c)
	}
	return Result{Err: fmt.Errorf("apply: %w: %q", ErrUnknownCommand, c.Type)}
}

// applyBody decodes the body into B and runs the handler, wrapping its error with the command type.
func applyBody[B any](s *State, c Command, h func(*State, time.Time, *B) (Result, error)) Result {
	var b B
	if err := decodeBody(c, &b); err != nil {
		return Result{Err: fmt.Errorf("apply: %w", err)}
	}
	res, err := h(s, c.At, &b)
	if err != nil {
		return Result{JobID: res.JobID, Err: fmt.Errorf("%s: %w", c.Type, err)}
	}
	return res
}

// initMaps makes a zero State usable (a State built by hand rather than by NewState).
func (s *State) initMaps() {
	if s.Jobs == nil {
		s.Jobs = map[uint64]*Job{}
	}
	if s.Probes == nil {
		s.Probes = map[ProbeKey]*Probe{}
	}
	if s.byRequest == nil {
		s.byRequest = map[string]uint64{}
		for id, j := range s.Jobs {
			if j.RequestID != "" {
				s.byRequest[j.RequestID] = id
			}
		}
	}
	if s.NextJobID == 0 {
		s.NextJobID = 1
		for id := range s.Jobs {
			s.NextJobID = max(s.NextJobID, id+1)
		}
	}
}
