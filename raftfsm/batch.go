package raftfsm

import (
	"encoding/json"
	"fmt"
)

// Batch (batch) carries many commands in one raft entry: the tasks of an
// array placed in one round, the starts of the attempts whose hosts all
// reserved, a host's reservations and its attempts' ends. Raft writes,
// replicates and applies one entry instead of one per command, and every
// reader of the state wakes once.
//
// The commands are applied in order, each as if it were an entry of its
// own proposed at the batch's time and committed at its index (a placement
// in a batch records the batch's index as its PlacedIndex), each checked
// and refused on its own: a refused command leaves the state as it was
// and the next is applied. With StopAtRefusal, the first refusal ends the
// batch: the commands after it are not applied, as the leader skips the
// rest of a round's placements once one is not taken, since each was
// decided counting the ones before it.
type Batch struct {
	Commands      []BatchItem `json:"commands"`
	StopAtRefusal bool        `json:"stop_at_refusal,omitempty"`
}

// BatchItem is one command of a batch: its type and its body, the JSON of
// the body struct of that type.
type BatchItem struct {
	Type string          `json:"type"`
	Body json.RawMessage `json:"body"`
}

// MaxBatch is the most commands one batch carries. A batch is one raft
// entry, written and sent whole; proposers split longer runs.
const MaxBatch = 512

// NewBatchItem encodes a command of type typ for a batch.
func NewBatchItem(typ string, body any) (BatchItem, error) {
	if !knownType(typ) || typ == CmdBatch {
		return BatchItem{}, fmt.Errorf("batch item %q: %w", typ, ErrUnknownCommand)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return BatchItem{}, fmt.Errorf("encode %s body: %w", typ, err)
	}
	return BatchItem{Type: typ, Body: raw}, nil
}

// applyBatch applies a batch's commands in order. The batch's own Result
// holds, in Results, one Result per command applied: all of them, or with
// StopAtRefusal those up to and including the first refused. A batch that
// is empty, too long or carries a type that cannot be batched is refused
// whole, before anything is applied.
func (s *State) applyBatch(c Command) Result {
	var b Batch
	if err := decodeBody(c, &b); err != nil {
		return Result{Err: fmt.Errorf("apply: %w", err)}
	}
	if len(b.Commands) == 0 || len(b.Commands) > MaxBatch {
		return Result{Err: fmt.Errorf("%s: %w: %d commands, want 1 to %d", CmdBatch, ErrInvalid, len(b.Commands), MaxBatch)}
	}
	for i, it := range b.Commands {
		if !knownType(it.Type) || it.Type == CmdBatch {
			return Result{Err: fmt.Errorf("%s: command %d: %w: %q cannot be batched", CmdBatch, i, ErrUnknownCommand, it.Type)}
		}
	}
	res := Result{Results: make([]Result, 0, len(b.Commands))}
	for _, it := range b.Commands {
		r := s.Apply(Command{V: c.V, Type: it.Type, At: c.At, Body: it.Body, Index: c.Index})
		r.Index = c.Index
		res.Results = append(res.Results, r)
		if r.Err != nil && b.StopAtRefusal {
			break
		}
	}
	return res
}
