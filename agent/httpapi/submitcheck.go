package httpapi

import (
	"fmt"
	"net/http"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// DefaultPriority is a job's priority when it asks for none. Users may
// lower theirs; a priority above it jumps the queue of everyone else, so
// it takes an administrator (root over the socket, or the token).
const DefaultPriority = 0

// checkSubmit refuses at the API what the FSM would refuse anyway, without
// a trip through raft, and what only the API can judge: who may raise a
// job's priority. It returns the HTTP code and the reason, or 0.
func (s *Server) checkSubmit(r *http.Request, sp *raftfsm.JobSpec) (int, string) {
	if sp.Priority > DefaultPriority && !privileged(r) {
		return http.StatusForbidden, fmt.Sprintf("priority %d is above the default %d, which only root or a holder of the cluster token may ask for; you may lower your job's priority (a negative --priority)", sp.Priority, DefaultPriority)
	}
	if err := raftfsm.ValidateSpec(*sp); err != nil {
		return http.StatusBadRequest, err.Error()
	}
	if err := s.cfg.Limits.CheckSpec(sp); err != nil {
		return http.StatusBadRequest, err.Error()
	}
	if err := s.checkMem(sp); err != nil {
		return http.StatusBadRequest, err.Error()
	}
	return 0, ""
}
