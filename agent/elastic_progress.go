package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleProgress is POST /v1/jobs/{id}/progress: a job's program reports its iteration (shoal
// progress, or shoal_elastic.h). It is authorised by the attempt's job capability, which the
// agent gives every job process in SHOAL_JOB_CAP, or by the cluster token. Reports are committed
// to raft at most every ProgressEvery per attempt, so the leader's decision layer reads them from
// the replicated state and a new leader carries on; the answer tells the program whether it was
// asked to checkpoint for a resize (the same request as SIGUSR1).
func (a *Agent) handleProgress(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("job ID %q is not a number", r.PathValue("id")))
		return
	}
	granted, ok := a.authTokenOrJob(w, r)
	if !ok {
		return
	}
	var req api.ProgressRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<12))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeErr(w, http.StatusBadRequest, "decode progress: "+err.Error())
		return
	}
	if granted != nil {
		if granted.Job != id || req.Attempt != 0 && req.Attempt != granted.Attempt {
			writeErr(w, http.StatusForbidden, fmt.Sprintf("capability is for job %d attempt %d", granted.Job, granted.Attempt))
			return
		}
		req.Attempt = granted.Attempt
	}
	if req.Iter < 0 || req.Comm != nil && !(*req.Comm >= 0 && *req.Comm <= 1) {
		writeErr(w, http.StatusBadRequest, "iter must be >= 0 and comm within [0,1]")
		return
	}
	var job *raftfsm.Job
	a.fsm.View(func(s *raftfsm.State) {
		if j := s.Jobs[id]; j != nil {
			c := *j
			if j.Elastic != nil {
				e := *j.Elastic
				c.Elastic = &e
			}
			job = &c
		}
	})
	switch {
	case job == nil:
		writeErr(w, http.StatusNotFound, fmt.Sprintf("no job %d", id))
		return
	case req.Attempt == 0:
		req.Attempt = job.Attempt
	}
	if job.Attempt != req.Attempt || job.State != raftfsm.StateRunning {
		writeErr(w, http.StatusConflict, fmt.Sprintf("job %d attempt %d is not running (job is %s at attempt %d)", id, req.Attempt, job.State, job.Attempt))
		return
	}
	k := jobKey{Job: id, Attempt: req.Attempt}
	out := api.ProgressResponse{Job: id, Attempt: req.Attempt, Iter: req.Iter}
	if e := job.Elastic; e != nil {
		out.Checkpoint, out.TargetNP = e.ResizeAttempt == req.Attempt, e.TargetNP
	}
	var total int64
	if job.Spec.Elastic != nil {
		total = job.Spec.Elastic.Iterations
	}
	if a.shouldCommit(k, req.Iter, total) {
		b, err := raftfsm.Encode(raftfsm.CmdReportProgress, time.Now(), raftfsm.ReportProgress{ID: id, Attempt: req.Attempt, Iter: req.Iter, Comm: req.Comm})
		if err != nil {
			writeErr(w, http.StatusBadRequest, err.Error())
			return
		}
		if total > 0 && req.Iter >= total {
			// The last iteration's report is committed before the answer: the
			// program exits next, and the attempt's end must not overtake it.
			out.Committed = a.commitProgress(r.Context(), k, b)
		} else {
			// Any other report is committed in the background. Rank 0 waits
			// for this answer inside its iteration loop, and every rank
			// waits for rank 0: a raft round trip here (hundreds of ms on
			// a loaded machine) would slow the whole program at every report.
			out.Committed = a.background(func() { a.commitProgress(a.ctx, k, b) })
		}
	}
	writeJSON(w, http.StatusOK, out)
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
