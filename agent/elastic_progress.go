package agent

import (
	"context"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// reportProgress records an attempt's reported iteration for the HTTP API
// (httpapi's POST /v1/jobs/{id}/progress): it is committed to raft at most
// every ProgressEvery per attempt, so the leader's decision layer reads it
// from the replicated state and a new leader carries on. It says whether
// this report is being committed.
func (a *Agent) reportProgress(ctx context.Context, id uint64, attempt int, iter, total int64, comm *float64) bool {
	k := jobKey{Job: id, Attempt: attempt}
	if !a.shouldCommit(k, iter, total) {
		return false
	}
	b, err := raftfsm.Encode(raftfsm.CmdReportProgress, time.Now(), raftfsm.ReportProgress{ID: id, Attempt: attempt, Iter: iter, Comm: comm})
	if err != nil {
		a.log.Error("encode report_progress", "err", err)
		a.forgetReport(k)
		return false
	}
	if total > 0 && iter >= total {
		// The last iteration's report is committed before the answer: the
		// program exits next, and the attempt's end must not overtake it.
		return a.commitProgress(ctx, k, b)
	}
	// Any other report is committed in the background. Rank 0 waits
	// for this answer inside its iteration loop, and every rank
	// waits for rank 0: a raft round trip here (hundreds of ms on
	// a loaded machine) would slow the whole program at every report.
	return a.background(func() { a.commitProgress(a.ctx, k, b) })
}

// commitProgress commits one report_progress; a report that is not
// committed is forgotten, so the next report of the attempt tries again.
func (a *Agent) commitProgress(ctx context.Context, k jobKey, b []byte) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	res, err := a.Apply(ctx, b)
	if err != nil || res.Err != "" {
		a.forgetReport(k)
		return false
	}
	return true
}

// shouldCommit rate-limits progress commits per attempt: the first report, then one every
// ProgressEvery, and the last iteration at once. It records the commit it allows.
func (a *Agent) shouldCommit(k jobKey, iter, total int64) bool {
	every := a.elasticOptions().ProgressEvery
	el := &a.jobs.el
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.reported == nil {
		el.reported = map[jobKey]progressMark{}
	}
	now := time.Now()
	m, seen := el.reported[k]
	if seen && iter <= m.iter {
		return false
	}
	if seen && now.Sub(m.at) < every && !(total > 0 && iter >= total) {
		return false
	}
	el.reported[k] = progressMark{at: now, iter: iter}
	return true
}

func (a *Agent) forgetReport(k jobKey) {
	a.jobs.el.mu.Lock()
	defer a.jobs.el.mu.Unlock()
	delete(a.jobs.el.reported, k)
}

// background runs f in a goroutine that Stop waits for, unless the agent
// is stopping (then it reports false and runs nothing): a WaitGroup must
// not gain work once Stop has begun to wait on it, and a handler outlives
// the HTTP server's shutdown grace.
func (a *Agent) background(f func()) bool {
	a.bgMu.Lock()
	defer a.bgMu.Unlock()
	if a.stopping {
		return false
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		f()
	}()
	return true
}
