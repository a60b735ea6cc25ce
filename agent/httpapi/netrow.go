package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/shoal-hpc/shoal/gossip"
)

// maxNetRowBody bounds POST /v1/netrow's body: the largest row a server
// takes (gossip.MaxNetRowBytes), and one byte to tell "too large".
const maxNetRowBody = gossip.MaxNetRowBytes + 1

// refuseJobs answers 403 to a request carrying a job capability: the
// route is for agents, and a job's processes must not write the matrix
// placement reads.
func refuseJobs(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Authorization"), "Job ") {
			writeErr(w, http.StatusForbidden, "network rows come from agents; a job capability may not send one")
			return
		}
		h(w, r)
	}
}

// handleNetRow serves POST /v1/netrow: another node's network row
// (gossip.NetRow) for this server's table. Agents only: a node
// certificate or the cluster token over TCP, root over the local socket.
// A row over the caps is 413, a malformed one 400, one sent to an agent
// that is not a server 409; nothing is kept then.
func (s *Server) handleNetRow(w http.ResponseWriter, r *http.Request) {
	if p, local := peerOf(r); local && p.uid != 0 {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("network rows come from agents; you are uid %d", p.uid))
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("network row over %d bytes: %v", gossip.MaxNetRowBytes, err))
		return
	}
	row, err := gossip.DecodeNetRow(b)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, gossip.ErrTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		writeErr(w, code, err.Error())
		return
	}
	if err := s.be.PutNetRow(row); err != nil {
		writeErr(w, statusOf(err, http.StatusConflict), err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
