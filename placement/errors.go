package placement

import "errors"

// Sentinel errors; Place and the hostfile functions wrap them with context.
var (
	ErrInvalidSnapshot = errors.New("invalid snapshot")
	ErrInvalidRequest  = errors.New("invalid request")
	ErrUnknownHost     = errors.New("unknown host")
	ErrDeadHost        = errors.New("dead host")
	ErrHostfile        = errors.New("invalid hostfile")
	ErrTooLarge        = errors.New("too many nodes for the oracle")
	ErrWait            = errors.New("decision is wait")
	// ErrCanceled: Request.Done was closed before the placement finished.
	ErrCanceled = errors.New("placement canceled")
	// ErrStepBudget: the placement needed more than Request.MaxSteps steps.
	ErrStepBudget = errors.New("placement step budget exceeded")
)
