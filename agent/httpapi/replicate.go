package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// handleReplicate streams the replicated state to a client agent
// (agent/replica): GET /v1/replicate?after=N answers a stream of frames
// that lasts as long as the caller reads it. It is for agents: a node
// certificate or the cluster token over TCP, root over the local socket.
// The stream carries every job's environment and every raw command, so a
// job capability or another local user gets 403.
func (s *Server) handleReplicate(w http.ResponseWriter, r *http.Request) {
	if p, local := peerOf(r); local {
		switch {
		case p.err != nil:
			writeErr(w, http.StatusForbidden, "the agent could not tell who you are: "+p.err.Error())
			return
		case p.uid != 0:
			writeErr(w, http.StatusForbidden, fmt.Sprintf("replication is for agents: it needs root or the cluster token; you are uid %d", p.uid))
			return
		}
	} else if !certAuthed(r) {
		auth := r.Header.Get("Authorization")
		tok, bearer := strings.CutPrefix(auth, "Bearer ")
		switch {
		case bearer && tokenOK(tok, s.cfg.Token):
		case strings.HasPrefix(auth, "Job "):
			writeErr(w, http.StatusForbidden, "replication is for agents: a job capability does not grant it")
			return
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
			writeErr(w, http.StatusUnauthorized, "missing or wrong cluster token")
			return
		}
	}
	var after uint64
	if q := r.URL.Query().Get("after"); q != "" {
		n, err := strconv.ParseUint(q, 10, 64)
		if err != nil {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("after must be a raft index, not %q", q))
			return
		}
		after = n
	}
	// Authenticated: the stream may last for days. Each write still gets
	// RequestTimeout, so a client that stopped reading does not hold the
	// stream's goroutine for as long as TCP retransmits.
	liftDeadlines(w)
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), timeout: s.cfg.HTTP.RequestTimeout}
	err := s.be.Replicate(r.Context(), after, sw, sw.flush)
	if err != nil && !sw.started {
		writeErr(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if err != nil {
		s.log.Debug("replicate stream ended", "remote", r.RemoteAddr, "after", after, "err", err)
	}
}

// streamWriter sends the 200 and its headers with the first frame (so an
// error before it can still be answered with a status), and bounds each
// write by a deadline.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool
}

func (sw *streamWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.started = true
		sw.w.Header().Set("Content-Type", "application/octet-stream")
		sw.w.Header().Set("Cache-Control", "no-store")
		sw.w.WriteHeader(http.StatusOK)
	}
	// A connection deadline is the kernel's wall clock: never the injected one.
	_ = sw.rc.SetWriteDeadline(time.Now().Add(sw.timeout))
	return sw.w.Write(p)
}

func (sw *streamWriter) flush() {
	if sw.started {
		_ = sw.rc.SetWriteDeadline(time.Now().Add(sw.timeout))
		_ = sw.rc.Flush()
	}
}
