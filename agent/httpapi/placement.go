package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/placement"
)

// Placement is why a leader placed one attempt of a job where it did:
// placement's breakdown of the decision, kept by the leader that made it.
type Placement struct {
	Job     uint64
	Attempt int
	At      time.Time
	Leader  string
	Score   placement.Breakdown
}

// handlePlacement answers GET /v1/jobs/{id}/placement: the leader holds the
// reasons of the placements it decided; any other agent asks it. Nodes,
// loads and costs only: nothing of the job's spec, so any caller who may
// list jobs may read it.
func (s *Server) handlePlacement(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobFromPath(w, r)
	if !ok {
		return
	}
	if p, ok := s.be.Placement(j.ID); ok {
		writeJSON(w, http.StatusOK, api.Placement{Job: p.Job, Attempt: p.Attempt, PlacedAt: p.At, Leader: p.Leader, Score: toAPIScore(p.Score)})
		return
	}
	if j.Attempt == 0 {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("job %d is not placed yet: see its wait reason in 'shoal jobs'", j.ID))
		return
	}
	id, _ := s.be.Leader()
	if r.URL.Query().Get("forwarded") != "" || s.be.IsLeader() || id == "" {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("the leader keeps no explanation of job %d's placement: "+
			"an earlier leader placed it, and the reasons are not replicated", j.ID))
		return
	}
	base, err := s.be.PeerBase(id)
	if err != nil {
		writeErr(w, http.StatusServiceUnavailable, "ask the leader for the placement: "+err.Error())
		return
	}
	var out api.Placement
	if err := s.be.PeerClient(base).Do(r.Context(), http.MethodGet, fmt.Sprintf("/v1/jobs/%d/placement?forwarded=1", j.ID), nil, &out); err != nil {
		code := http.StatusServiceUnavailable
		if se := (*api.StatusError)(nil); errors.As(err, &se) {
			code = se.Code
		}
		writeErr(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}
