package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
)

// handleStdin is POST /v1/jobs/{id}/stdin?attempt=N: the body is the
// standard input of the attempt's launcher, which gives it to rank 0
// (`shoal run` forwards its own). Only the job's owner (or root, or a
// holder of the token) may send it; the head node takes it, any other agent
// relays it there.
func (s *Server) handleStdin(w http.ResponseWriter, r *http.Request) {
	liftDeadlines(w) // a stream as long as the job
	j, ok := s.jobFromPath(w, r)
	if !ok {
		return
	}
	if u, err := actAs(r, ""); !privileged(r) && (err != nil || u != j.Owner) {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("only %s (or root) may send job %d its input", j.Owner, j.ID))
		return
	}
	n, err := strconv.Atoi(r.URL.Query().Get("attempt"))
	if err != nil || n < 1 || n > len(j.Attempts) {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("job %d has no attempt %q", j.ID, r.URL.Query().Get("attempt")))
		return
	}
	if !j.Spec.Stdin {
		writeErr(w, http.StatusConflict, fmt.Sprintf("job %d takes no standard input (only 'shoal run' jobs do)", j.ID))
		return
	}
	if head := j.Attempts[n-1].Head; head != s.cfg.Name {
		base, err := s.be.PeerBase(head)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, fmt.Sprintf("job %d runs on %s, which is not reachable: %v", j.ID, head, err))
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, base+r.URL.RequestURI(), r.Body)
		if err != nil {
			writeErr(w, http.StatusInternalServerError, err.Error())
			return
		}
		// No token: this agent's client certificate authenticates it (mutual TLS).
		resp, err := s.be.StreamClient().Do(out)
		if err != nil {
			writeErr(w, http.StatusBadGateway, fmt.Sprintf("reach %s: %v", head, err))
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		copyFlush(w, resp.Body)
		return
	}
	if err := s.be.FeedStdin(r.Context(), j.ID, n, r.Body); err != nil {
		writeErr(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]uint64{"id": j.ID})
}
