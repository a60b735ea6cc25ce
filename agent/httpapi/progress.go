package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// handleProgress is POST /v1/jobs/{id}/progress: a job's program reports its iteration (shoal
// progress, or shoal_elastic.h). It is authorised by the attempt's job capability, which the
// agent gives every job process in a file only the owner reads (SHOAL_JOB_CAP_FILE), or by the
// cluster token. The backend commits
// reports to raft at most every so often per attempt, so the leader's decision layer reads them
// from the replicated state and a new leader carries on; the answer tells the program whether it
// was asked to checkpoint for a resize (the same request as SIGUSR1).
func (s *Server) handleProgress(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("job ID %q is not a number", r.PathValue("id")))
		return
	}
	granted, ok := s.authTokenOrJob(w, r)
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
	s.be.View(func(st *raftfsm.State) {
		if j := st.Jobs[id]; j != nil {
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
	out := api.ProgressResponse{Job: id, Attempt: req.Attempt, Iter: req.Iter}
	if e := job.Elastic; e != nil {
		out.Checkpoint, out.TargetNP = e.ResizeAttempt == req.Attempt, e.TargetNP
	}
	var total int64
	if job.Spec.Elastic != nil {
		total = job.Spec.Elastic.Iterations
	}
	out.Committed = s.be.ReportProgress(r.Context(), id, req.Attempt, req.Iter, total, req.Comm)
	writeJSON(w, http.StatusOK, out)
}
