package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// batcher commits the commands a node's job side proposes in as few raft
// entries as they allow (group commit): a command proposed while none is
// in flight goes at once, alone; the commands proposed while one is in
// flight wait for it and then go together, as one batch. An idle node
// pays nothing; a host that acknowledges, starts and ends many tasks of an
// array at once writes one entry per round trip instead of one per task,
// and every reader of the state wakes once for all of them.
//
// Each command is still checked on its own (raftfsm.Batch without
// StopAtRefusal) and each caller gets its own answer: a caller sees the
// same results and errors as from the applier it wraps.
type batcher struct {
	// ctx ends the batcher's writes when the agent stops.
	ctx   context.Context
	apply func(context.Context, []byte) (api.ApplyResult, error)
	// spawn runs the sender in a goroutine the agent waits for at
	// shutdown, or reports false when the agent is stopping (loops.background).
	spawn func(func()) bool

	mu      sync.Mutex
	queue   []*proposal
	sending bool
}

// proposal is one command waiting for its answer.
type proposal struct {
	cmd  raftfsm.Command
	raw  []byte
	done chan proposalAnswer // buffered: the sender never blocks
}

type proposalAnswer struct {
	res api.ApplyResult
	err error
}

// maxBatchBytes bounds the bodies of one batch, well inside the API's
// bound on a forwarded write.
const maxBatchBytes = 256 << 10

func newBatcher(ctx context.Context, apply func(context.Context, []byte) (api.ApplyResult, error), spawn func(func()) bool) *batcher {
	return &batcher{ctx: ctx, apply: apply, spawn: spawn}
}

// Apply commits cmd, with the commands proposed meanwhile, and returns
// its own answer. A batch, or what does not decode, goes as it is (the
// applier refuses the latter). Cancelling ctx stops the wait, not the
// write: as after any timeout, the outcome is unknown and callers retry
// by the command's key.
func (b *batcher) Apply(ctx context.Context, cmd []byte) (api.ApplyResult, error) {
	c, err := raftfsm.Decode(cmd)
	if err != nil || c.Type == raftfsm.CmdBatch {
		return b.apply(ctx, cmd)
	}
	p := &proposal{cmd: c, raw: cmd, done: make(chan proposalAnswer, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, p)
	if !b.sending {
		b.sending = true
		if !b.spawn(b.send) {
			b.sending = false
			b.queue = b.queue[:len(b.queue)-1]
			b.mu.Unlock()
			return api.ApplyResult{}, fmt.Errorf("propose %s: %w", c.Type, ErrStopping)
		}
	}
	b.mu.Unlock()
	select {
	case a := <-p.done:
		return a.res, a.err
	case <-ctx.Done():
		return api.ApplyResult{}, fmt.Errorf("propose %s: %w", c.Type, ctx.Err())
	}
}

// send writes what is queued, a batch at a time, until the queue is empty.
func (b *batcher) send() {
	for {
		b.mu.Lock()
		n, size := 0, 0
		for n < len(b.queue) && n < raftfsm.MaxBatch && (n == 0 || size+len(b.queue[n].cmd.Body) <= maxBatchBytes) {
			size += len(b.queue[n].cmd.Body)
			n++
		}
		if n == 0 {
			b.sending = false
			b.mu.Unlock()
			return
		}
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.write(batch)
	}
}

// write commits one batch and answers each of its proposals.
func (b *batcher) write(ps []*proposal) {
	if len(ps) == 1 {
		res, err := b.apply(b.ctx, ps[0].raw)
		ps[0].done <- proposalAnswer{res, err}
		return
	}
	body := raftfsm.Batch{Commands: make([]raftfsm.BatchItem, len(ps))}
	at := ps[0].cmd.At
	for i, p := range ps {
		body.Commands[i] = raftfsm.BatchItem{Type: p.cmd.Type, Body: json.RawMessage(p.cmd.Body)}
		if p.cmd.At.After(at) {
			at = p.cmd.At // never before the event any of them records
		}
	}
	raw, err := raftfsm.Encode(raftfsm.CmdBatch, at, body)
	var res api.ApplyResult
	if err == nil {
		res, err = b.apply(b.ctx, raw)
	}
	for i, p := range ps {
		a := proposalAnswer{err: err}
		if err == nil {
			r, ok := res.Result(i)
			switch {
			case ok:
				a.res = r
			case res.Err != "":
				a.res = api.ApplyResult{Index: res.Index, Err: res.Err, Code: res.Code} // the batch refused whole
			default:
				a.err = fmt.Errorf("propose %s: the batch holding it answered %d of %d commands", p.cmd.Type, len(res.Results), len(ps))
			}
		}
		p.done <- a
	}
}
