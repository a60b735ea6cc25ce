package agent

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/agent/jobrun"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// progressReporter commits the progress elastic attempts report through
// this node (httpapi's POST /v1/jobs/{id}/progress), rate-limited per
// attempt, and keeps the marks of that limit until the attempt ends.
type progressReporter struct {
	log *slog.Logger
	now func() time.Time
	// apply commits a command through the leader (applier.Apply).
	apply func(context.Context, []byte) (api.ApplyResult, error)
	// state is this node's copy of the replicated state: prune reads
	// which attempts have ended.
	state jobrun.StateReader
	// options hold ProgressEvery.
	options *elasticSettings
	// loops run the commits that do not hold up the report's answer.
	loops *loops

	mu       sync.Mutex
	reported map[jobrun.Key]progressMark // the last progress committed per attempt
	// pending counts the background commits under way per attempt, and
	// settled is closed and replaced when an attempt's count drops to 0.
	pending map[jobrun.Key]int
	settled chan struct{}
}

type progressMark struct {
	at   time.Time
	iter int64
}

// report records an attempt's reported iteration: it is committed to raft
// at most every ProgressEvery per attempt, so the leader's decision layer
// reads it from the replicated state and a new leader carries on. It says
// whether this report is being committed.
func (r *progressReporter) report(ctx context.Context, id uint64, attempt int, iter, total int64, comm *float64) bool {
	k := jobrun.Key{Job: id, Attempt: attempt}
	if !r.shouldCommit(k, iter, total) {
		return false
	}
	b, err := raftfsm.Encode(raftfsm.CmdReportProgress, r.now(), raftfsm.ReportProgress{ID: id, Attempt: attempt, Iter: iter, Comm: comm})
	if err != nil {
		r.log.Error("encode report_progress", "err", err)
		r.forget(k)
		return false
	}
	if total > 0 && iter >= total {
		// The last iteration's report is committed before the answer: the
		// program exits next, and the attempt's end must not overtake it.
		return r.commit(ctx, k, b)
	}
	// Any other report is committed in the background. Rank 0 waits
	// for this answer inside its iteration loop, and every rank
	// waits for rank 0: a raft round trip here (hundreds of ms on
	// a loaded machine) would slow the whole program at every report.
	r.begin(k)
	if !r.loops.background(func() { defer r.end(k); r.commit(r.loops.ctx, k, b) }) {
		r.end(k)
		return false
	}
	return true
}

// begin and end count an attempt's background commits under way.
func (r *progressReporter) begin(k jobrun.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[jobrun.Key]int{}
	}
	r.pending[k]++
}

func (r *progressReporter) end(k jobrun.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending[k]--; r.pending[k] > 0 {
		return
	}
	delete(r.pending, k)
	if r.settled != nil {
		close(r.settled)
		r.settled = nil
	}
}

// settle waits until attempt k has no background commit under way, or
// ctx ends: the job node calls it before it proposes the attempt's
// outcome (jobrun.Deps.Settle), so a report the program sent just before
// it exited is committed first, as a last iteration's is.
func (r *progressReporter) settle(ctx context.Context, k jobrun.Key) {
	for {
		r.mu.Lock()
		if r.pending[k] == 0 {
			r.mu.Unlock()
			return
		}
		if r.settled == nil {
			r.settled = make(chan struct{})
		}
		ch := r.settled
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// commit commits one report_progress; a report that is not committed is
// forgotten, so the next report of the attempt tries again.
func (r *progressReporter) commit(ctx context.Context, k jobrun.Key, b []byte) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	res, err := r.apply(ctx, b)
	if err != nil || res.Err != "" {
		r.forget(k)
		return false
	}
	return true
}

// shouldCommit rate-limits progress commits per attempt: the first report, then one every
// ProgressEvery, and the last iteration at once. It records the commit it allows.
func (r *progressReporter) shouldCommit(k jobrun.Key, iter, total int64) bool {
	every := r.options.get().ProgressEvery
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported == nil {
		r.reported = map[jobrun.Key]progressMark{}
	}
	now := r.now()
	m, seen := r.reported[k]
	if seen && iter <= m.iter {
		return false
	}
	if seen && now.Sub(m.at) < every && !(total > 0 && iter >= total) {
		return false
	}
	r.reported[k] = progressMark{at: now, iter: iter}
	return true
}

func (r *progressReporter) forget(k jobrun.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.reported, k)
}

// prune drops the progress marks of attempts that have ended; the job
// node runs it with its own pruning (jobrun.Deps.Prune).
func (r *progressReporter) prune() {
	r.mu.Lock()
	reported := make([]jobrun.Key, 0, len(r.reported))
	for k := range r.reported {
		reported = append(reported, k)
	}
	r.mu.Unlock()
	var ended []jobrun.Key
	r.state.View(func(s *raftfsm.State) {
		for _, k := range reported {
			if jobrun.AttemptEndedIn(s, k) {
				ended = append(ended, k)
			}
		}
	})
	r.mu.Lock()
	for _, k := range ended {
		delete(r.reported, k)
	}
	r.mu.Unlock()
}

// size is how many marks are kept (BookkeepingSizes' "reported").
func (r *progressReporter) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reported)
}
