package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
	"github.com/shoal-hpc/shoal/snapfile"
)

// maxSnapshot bounds a snapshot file a restore takes: far above the state
// of a cluster whose job GC runs, far below what hurts an agent.
const maxSnapshot = 256 << 20

// handleSnapshotSave answers a snapshot file of the replicated state,
// taken on the leader (`shoal operator snapshot save`).
func (s *Server) handleSnapshotSave(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r, "snapshot save") {
		return
	}
	liftDeadlines(w)
	if s.forwardToLeader(w, r, nil, snapshotHold) {
		return
	}
	file, err := s.be.SaveSnapshot(r.Context())
	if err != nil {
		writeErr(w, statusOf(err, http.StatusServiceUnavailable), err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(file)
}

// handleSnapshotRestore replaces the replicated state with a snapshot
// file's. The file is checked whole (format, size, checksum, the state in
// it) before anything changes, here and again on the leader.
func (s *Server) handleSnapshotRestore(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r, "snapshot restore") {
		return
	}
	if s.refuseForwardedOnFollower(w, r) {
		return
	}
	liftDeadlines(w)
	file, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("read snapshot: %v (at most %d MiB)", err, maxSnapshot>>20))
		return
	}
	h, payload, err := checkSnapshot(file)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.forwardToLeader(w, r, file, snapshotHold) {
		return
	}
	if err := s.be.RestoreSnapshot(r.Context(), h, payload); err != nil {
		writeErr(w, statusOf(err, http.StatusServiceUnavailable), err.Error())
		return
	}
	jobs := 0
	s.be.View(func(st *raftfsm.State) { jobs = len(st.Jobs) })
	s.log.Warn("restored the cluster state from a snapshot", "raft_index", h.RaftIndex, "taken_at", h.TakenAt, "jobs", jobs)
	writeJSON(w, http.StatusOK, api.RestoreResponse{RaftIndex: h.RaftIndex, Jobs: jobs})
}

// checkSnapshot refuses a file that is not a whole shoal snapshot of a
// state this agent can load, saying what is wrong with it.
func checkSnapshot(file []byte) (snapfile.Header, []byte, error) {
	h, payload, err := snapfile.Decode(file)
	if err != nil {
		return h, nil, fmt.Errorf("refused snapshot: %w", err)
	}
	if h.FSMVersion != raftfsm.SnapshotVersion {
		return h, nil, fmt.Errorf("refused snapshot: its state is version %d, this shoal reads %d", h.FSMVersion, raftfsm.SnapshotVersion)
	}
	if _, err := raftfsm.CheckSnapshot(payload); err != nil {
		return h, nil, fmt.Errorf("refused snapshot: %w", err)
	}
	return h, payload, nil
}

func (s *Server) handleRaftPeers(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r, "raft list-peers") {
		return
	}
	peers, err := s.be.RaftPeers()
	if err != nil {
		writeErr(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, peers)
}

func (s *Server) handleRemovePeer(w http.ResponseWriter, r *http.Request) {
	if !s.admin(w, r, "raft remove-peer") {
		return
	}
	var body api.RemovePeerRequest
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil || body.ID == "" {
		writeErr(w, http.StatusBadRequest, "remove-peer takes {\"id\": NODE} (see 'shoal operator raft list-peers')")
		return
	}
	if s.forwardToLeader(w, r, raw, leaderHold) {
		return
	}
	if err := s.be.RemovePeer(r.Context(), body.ID); err != nil {
		writeErr(w, statusOf(err, http.StatusServiceUnavailable), err.Error())
		return
	}
	s.log.Warn("removed a raft peer by hand", "id", body.ID)
	writeJSON(w, http.StatusOK, map[string]string{"removed": body.ID})
}

// admin refuses a request that is not an administrator's (root over the
// local socket, or the cluster token).
func (s *Server) admin(w http.ResponseWriter, r *http.Request, verb string) bool {
	if privileged(r) {
		return true
	}
	p, _ := peerOf(r)
	writeErr(w, http.StatusForbidden, fmt.Sprintf("%s needs root or the cluster token; you are uid %d", verb, p.uid))
	return false
}

// forwardToLeader sends the request on to the raft leader and copies its
// answer, unless this agent leads (false: answer it here). A forwarded
// request that reaches a follower is refused, so forwarding never loops.
//
// Leadership can move between this agent reading who leads and the
// request arriving there, and an election leaves a moment with no leader
// at all: both are retried, with backoff, for up to leaderHold (as
// Consul's RPC forwarding holds a request through an election), so an
// operator's restore or remove-peer does not fail on an election it
// could not see. Every other answer, the leader's refusals included, is
// passed on at once.
//
// hold bounds the whole forward, the attempt in flight included: a leader
// that takes the request and never answers (paused, or hung on its disk)
// costs the operator the hold, not the peer client's own timeout, and the
// answer then says the request may still be carried out.
func (s *Server) forwardToLeader(w http.ResponseWriter, r *http.Request, body []byte, hold time.Duration) bool {
	if s.be.IsLeader() {
		return false
	}
	if r.URL.Query().Get("forwarded") != "" {
		writeErr(w, http.StatusServiceUnavailable, ErrNotLeader.Error())
		return true
	}
	ctx, cancel := context.WithTimeout(r.Context(), hold)
	defer cancel()
	backoff := 25 * time.Millisecond
	for {
		out, code, msg := s.forwardOnce(ctx, r, body)
		if code == 0 {
			if json.Valid(out) {
				w.Header().Set("Content-Type", "application/json")
			} else {
				w.Header().Set("Content-Type", "application/octet-stream")
			}
			_, _ = w.Write(out)
			return true
		}
		if code != http.StatusServiceUnavailable || (msg != ErrNotLeader.Error() && msg != ErrNoLeader.Error()) {
			writeErr(w, code, msg)
			return true
		}
		select {
		case <-ctx.Done():
			writeErr(w, code, msg)
			return true
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
		if s.be.IsLeader() {
			return false // elected here meanwhile: answer it here
		}
	}
}

// leaderHold is how long a request forwarded to the leader may take,
// retries while leadership moves included.
const leaderHold = 7 * time.Second

// snapshotHold is leaderHold for a snapshot saved or restored through a
// follower: the file of up to maxSnapshot crosses to or from the leader
// within it, and the leader checks a restored one whole before it
// answers. It is the peer client's own timeout, which bounded these
// forwards before the hold did.
const snapshotHold = 30 * time.Second

// forwardOnce sends the request to the agent this one believes leads,
// within ctx: its answer's body, or a status and message (code 0 for
// success).
func (s *Server) forwardOnce(ctx context.Context, r *http.Request, body []byte) (out []byte, code int, msg string) {
	id, _ := s.be.Leader()
	if id == "" {
		return nil, http.StatusServiceUnavailable, ErrNoLeader.Error()
	}
	base, err := s.be.PeerBase(id)
	if err != nil {
		// A leader that has just died may be gone from gossip before
		// raft stops naming it: nothing was sent, so it is retried.
		return nil, http.StatusServiceUnavailable, ErrNoLeader.Error()
	}
	var in any
	if body != nil {
		in = body
	}
	if err := s.be.PeerClient(base).Do(ctx, r.Method, r.URL.Path+"?forwarded=1", in, &out); err != nil {
		var se *api.StatusError
		if errors.As(err, &se) {
			return nil, se.Code, se.Msg
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			// The leader raft still names has crashed, the usual start
			// of an election: the request never reached it, so it is
			// retried like an answer that no leader is known.
			return nil, http.StatusServiceUnavailable, ErrNoLeader.Error()
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Not a 503: a client would send it again elsewhere, and the
			// leader may have carried out the first.
			return nil, http.StatusGatewayTimeout, fmt.Sprintf("the leader %s took the request but did not answer in time; "+
				"it may still carry it out: check the cluster before sending it again", id)
		}
		return nil, http.StatusServiceUnavailable, err.Error()
	}
	return out, 0, ""
}

// refuseForwardedOnFollower answers a request another agent forwarded
// here believing this one leads, when it does not, before its body is
// read: the sender retries elsewhere, and a snapshot of up to hundreds of
// MiB is not read and checked for nothing on every try.
func (s *Server) refuseForwardedOnFollower(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Get("forwarded") == "" || s.be.IsLeader() {
		return false
	}
	writeErr(w, http.StatusServiceUnavailable, ErrNotLeader.Error())
	return true
}

// statusOf is the HTTP status err carries (WithStatus), else def.
func statusOf(err error, def int) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.code
	}
	return def
}
