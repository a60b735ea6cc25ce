package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/shoal-hpc/shoal/nodestate"
)

// maxNetRowBody bounds POST /v1/netrow's body: the largest row a server
// takes (nodestate.MaxNetRowBytes), and one byte to tell "too large".
const maxNetRowBody = nodestate.MaxNetRowBytes + 1

// refuseJobs answers 403 to a request carrying a job capability: the
// route is for agents, and a job's processes must not write the matrix
// placement reads, nor renew a node's lease. what names the route's
// requests, plural.
func refuseJobs(what string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Authorization"), "Job ") {
			writeErr(w, http.StatusForbidden, what+" come from agents; a job capability may not send one")
			return
		}
		h(w, r)
	}
}

// handleNetRow serves POST /v1/netrow: another node's network row
// (nodestate.NetRow) for this server's table. Agents only: a node
// certificate or the cluster token over TCP, root over the local socket.
// A row over the caps is 413, a malformed one 400, one sent to an agent
// that is not a server 409; nothing is kept then.
//
// A node publishes only its own row: placement trusts the matrix, so a
// node must not write what another measured. With a client certificate
// the row's owner must be the node the certificate names (certNode), else
// 403. The cluster token and root over the local socket stay
// administrators, as on every other agent-only route (/v1/apply,
// /v1/replicate): they may send any node's row. Agents never send the
// token to each other (mutual TLS only), so the check binds every row an
// agent sends; with the token's derived CA any token holder could mint a
// certificate of any name anyway, so it is a hard boundary only where
// a site's CA issues each node its own certificate (--tls-ca-file).
func (s *Server) handleNetRow(w http.ResponseWriter, r *http.Request) {
	if p, local := peerOf(r); local && p.uid != 0 {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("network rows come from agents; you are uid %d", p.uid))
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("network row over %d bytes: %v", nodestate.MaxNetRowBytes, err))
		return
	}
	row, err := nodestate.DecodeNetRow(b)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, nodestate.ErrTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		writeErr(w, code, err.Error())
		return
	}
	if name, ok := certNode(r); ok && name != row.Node {
		writeErr(w, http.StatusForbidden, fmt.Sprintf("the certificate of node %q may send only that node's network row, not %q's", name, row.Node))
		return
	}
	if err := s.be.PutNetRow(row); err != nil {
		writeErr(w, statusOf(err, http.StatusConflict), err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// certNode is the node a request's verified client certificate names:
// its common name, which is the node's name in every leaf an agent issues
// itself (tlsca.AgentRequest) and in a site's (`shoal tls cert create
// --node NAME`). ok is false without a certificate (the token, the local
// socket).
func certNode(r *http.Request) (name string, ok bool) {
	if !certAuthed(r) || len(r.TLS.VerifiedChains[0]) == 0 {
		return "", false
	}
	return r.TLS.VerifiedChains[0][0].Subject.CommonName, true
}
