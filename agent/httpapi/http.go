package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// maxBody bounds every request body the API reads.
const maxBody = 1 << 20

var (
	// ErrNoLeader is returned when a write found no raft leader before its
	// deadline.
	ErrNoLeader = errors.New("no raft leader")
	// ErrNotLeader is returned by a forwarded write that reached a node
	// that is no longer the leader; the sender retries.
	ErrNotLeader = errors.New("this agent is not the raft leader")
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeErr(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, api.Error{Error: msg})
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	h := api.Health{Status: "ok", Name: s.cfg.Name, Boot: s.cfg.Boot}
	if why := s.unhealthy(); why != "" {
		h.Status, h.Reason = "unhealthy", why
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) unhealthy() string {
	if s.cfg.Unhealthy == nil {
		return ""
	}
	return s.cfg.Unhealthy()
}

// vouched serves h, a read of the replicated state, only while this agent
// can vouch for its copy: a server whose raft log cannot be written
// stopped taking entries and would answer from the past (a finished job
// still running, a new one not found). 503 sends the CLI to another
// agent.
func (s *Server) vouched(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if why := s.unhealthy(); why != "" {
			writeErr(w, http.StatusServiceUnavailable, "this agent's copy of the cluster state may be stale ("+why+
				"): ask another agent (shoal members lists them; --addr picks one)")
			return
		}
		h(w, r)
	}
}

func (s *Server) handleSelf(w http.ResponseWriter, r *http.Request) {
	if !s.blockNodes(w, r) {
		return
	}
	e, _ := s.be.Node(s.cfg.Name)
	n := []api.Node{toAPINode(e)}
	s.withDrains(n)
	writeJSON(w, http.StatusOK, n[0])
}

func (s *Server) handleNodes(w http.ResponseWriter, r *http.Request) {
	if !s.blockNodes(w, r) {
		return
	}
	out := []api.Node{}
	for _, e := range s.be.Nodes() {
		if e.HasState {
			out = append(out, toAPINode(e))
		}
	}
	s.withDrains(out)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleMembers(w http.ResponseWriter, r *http.Request) {
	if !s.blockNodes(w, r) {
		return
	}
	roles := s.be.Roles()
	out := []api.Member{}
	for _, e := range s.be.Nodes() {
		role := roles[e.State.Name]
		if role == "" {
			role = "none"
		}
		m := api.Member{Name: e.State.Name, Addr: e.State.Addr, Status: string(e.Status), Role: role}
		if e.State.Addr != "" && e.State.HTTPPort != 0 {
			m.API = net.JoinHostPort(e.State.Addr, strconv.Itoa(e.State.HTTPPort))
		}
		out = append(out, m)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleLeader(w http.ResponseWriter, _ *http.Request) {
	id, addr := s.be.Leader()
	if id == "" {
		writeErr(w, http.StatusServiceUnavailable, "no raft leader right now; see 'shoal members'")
		return
	}
	writeJSON(w, http.StatusOK, api.Leader{Name: id, Addr: addr})
}

// handleApply takes an encoded command. A forwarded command that reaches a
// node which is not the leader is refused with 503 rather than forwarded
// again, so forwarding never loops.
func (s *Server) handleApply(w http.ResponseWriter, r *http.Request) {
	if p, local := peerOf(r); local && p.uid != 0 {
		// A raw command names whomever it likes (owner, user); only
		// administrators may send one.
		writeErr(w, http.StatusForbidden, fmt.Sprintf("raw raft commands need root or the cluster token; you are uid %d", p.uid))
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, http.StatusRequestEntityTooLarge, "read command: "+err.Error())
		return
	}
	if _, err := raftfsm.Decode(b); err != nil {
		writeErr(w, http.StatusBadRequest, "refused command: "+err.Error())
		return
	}
	if r.URL.Query().Get("forwarded") != "" {
		if !s.be.IsLeader() {
			writeErr(w, http.StatusServiceUnavailable, ErrNotLeader.Error())
			return
		}
		ctx, cancel := s.writeContext(r)
		defer cancel()
		res, err := s.be.ApplyLocal(ctx, b)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, res)
		return
	}
	ctx, cancel := s.writeContext(r)
	defer cancel()
	res, err := s.be.Apply(ctx, b)
	if err != nil {
		code := http.StatusServiceUnavailable
		var se *api.StatusError
		if errors.As(err, &se) {
			code = se.Code
		}
		writeErr(w, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// handleState returns the replicated state. Reads are local and may be
// stale; ?consistent=1 first confirms leadership and applies everything
// committed (on the leader) or forwards to it.
func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	if !privileged(r) {
		// The whole state holds every job's environment (mayReadEnv).
		writeErr(w, http.StatusForbidden, "the raw cluster state needs root or the cluster token")
		return
	}
	if r.URL.Query().Get("consistent") != "" {
		if !s.be.IsLeader() {
			id, _ := s.be.Leader()
			if id == "" {
				writeErr(w, http.StatusServiceUnavailable, ErrNoLeader.Error())
				return
			}
			base, err := s.be.PeerBase(id)
			if err != nil {
				writeErr(w, http.StatusServiceUnavailable, err.Error())
				return
			}
			var st json.RawMessage
			if err := s.be.PeerClient(base).Do(r.Context(), "GET", "/v1/state?consistent=1", nil, &st); err != nil {
				writeErr(w, http.StatusServiceUnavailable, err.Error())
				return
			}
			writeJSON(w, http.StatusOK, st)
			return
		}
		if err := s.be.ConfirmLeader(); err != nil {
			writeErr(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	// The raw state is raftfsm's own schema, as /v1/apply takes raftfsm's
	// commands: both are for administrators and tools, not a listing.
	writeJSON(w, http.StatusOK, s.be.State())
}
