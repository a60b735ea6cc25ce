package raftfsm

import "errors"

// Sentinel errors. Apply wraps them with the job, attempt or field at fault, so callers test with
// errors.Is and show the message. Every refused command leaves the state untouched.
var (
	// ErrMalformed: the log entry or the command body is not valid JSON of the expected shape.
	ErrMalformed = errors.New("malformed command")
	// ErrVersion: the command was encoded by a version of shoal this FSM does not know.
	ErrVersion = errors.New("unknown command version")
	// ErrUnknownCommand: the command type is not one of the Cmd* constants.
	ErrUnknownCommand = errors.New("unknown command type")
	// ErrInvalid: a field of the body is out of bounds; the message names the field and the bound.
	ErrInvalid = errors.New("invalid command")
	// ErrNoSuchJob: the job ID is not in the state.
	ErrNoSuchJob = errors.New("no such job")
	// ErrStaleAttempt: the command names an attempt that is not the job's live attempt (an older or
	// a future one, or the current one after it ended). This is the fence that keeps two live
	// attempts of one job from ever existing.
	ErrStaleAttempt = errors.New("stale attempt")
	// ErrWrongState: the job is not in a state from which the command's transition is allowed.
	ErrWrongState = errors.New("job not in a state that allows this command")
	// ErrJobTerminal: the job is done, failed or killed already.
	ErrJobTerminal = errors.New("job already ended")
	// ErrNotAllocated: the node does not belong to the attempt's allocation.
	ErrNotAllocated = errors.New("node not allocated to this attempt")
	// ErrNotAcked: start refused because some allocated node has not reserved its slots yet.
	ErrNotAcked = errors.New("co-allocation incomplete")
	// ErrNotOwner: a user other than the owner (or root) tried to kill a job.
	ErrNotOwner = errors.New("not the job's owner")
	// ErrRequestConflict: a submit reuses a request ID that belongs to another owner's job.
	ErrRequestConflict = errors.New("request ID already used by another owner")
	// ErrStaleCycle: probe duties for a cycle older than the recorded one.
	ErrStaleCycle = errors.New("stale probe cycle")
	// ErrStaleGeneration: a probe restart based on a generation that is no longer the current one.
	ErrStaleGeneration = errors.New("stale probe generation")
	// ErrBadSnapshot: Restore was given data it cannot read; the state is left as it was.
	ErrBadSnapshot = errors.New("bad snapshot")
	// ErrOverLimit: a submit would take its owner over a per-user limit (Limits).
	ErrOverLimit = errors.New("over a per-user limit")
	// ErrInternal: a bug in the FSM was caught while applying; the state is left as it was.
	ErrInternal = errors.New("internal error in state machine")
)

// codes gives each sentinel a stable name, so a write forwarded from a follower to the leader can
// carry the refusal back over the wire and still satisfy errors.Is on the follower.
var codes = []struct {
	code string
	err  error
}{
	{"malformed", ErrMalformed},
	{"version", ErrVersion},
	{"unknown_command", ErrUnknownCommand},
	{"invalid", ErrInvalid},
	{"no_such_job", ErrNoSuchJob},
	{"stale_attempt", ErrStaleAttempt},
	{"wrong_state", ErrWrongState},
	{"job_terminal", ErrJobTerminal},
	{"not_allocated", ErrNotAllocated},
	{"not_acked", ErrNotAcked},
	{"not_owner", ErrNotOwner},
	{"request_conflict", ErrRequestConflict},
	{"stale_cycle", ErrStaleCycle},
	{"stale_generation", ErrStaleGeneration},
	{"bad_snapshot", ErrBadSnapshot},
	{"over_limit", ErrOverLimit},
	{"internal", ErrInternal},
}

// Code returns the stable name of the sentinel err wraps ("stale_attempt", ...), "" for nil and
// "other" for an error that wraps none of them.
func Code(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "other"
}

// Sentinel returns the sentinel error named by code (the inverse of Code), or nil.
func Sentinel(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}
