package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
)

// handleLease serves POST /v1/lease on the leader: a node renews the lease
// under which it runs its attempts (agent/fence). Agents only, as for
// network rows: a node certificate renews only its own node's lease, and
// a job's capability none. An agent that does not lead, or cannot confirm
// with a quorum that it still leads, answers 409 and records nothing.
func (s *Server) handleLease(w http.ResponseWriter, r *http.Request) {
	if p, local := peerOf(r); local && p.uid != 0 {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("leases are renewed by agents; you are uid %d", p.uid))
		return
	}
	var req api.LeaseRenewal
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Node == "" || req.LeaseMS < 0 {
		writeErr(w, http.StatusBadRequest, `lease renewal: want a JSON body {"node": NAME, "applied": INDEX, "lease_ms": MS}`)
		return
	}
	if name, ok := certNode(r); ok && name != req.Node {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("the certificate of node %q may renew only that node's lease, not %q's", name, req.Node))
		return
	}
	index, err := s.be.RenewLease(r.Context(), req.Node, req.Applied, time.Duration(req.LeaseMS)*time.Millisecond)
	if err != nil {
		writeErr(w, statusOf(err, http.StatusConflict), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, api.LeaseGrant{Index: index})
}
