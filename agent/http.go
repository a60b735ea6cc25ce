package agent

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// maxBody bounds every request body the API reads.
const maxBody = 1 << 20

func (a *Agent) startHTTP() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", a.handleHealth)
	a.route(mux, "GET /v1/self", a.handleSelf)
	a.route(mux, "GET /v1/nodes", a.handleNodes)
	a.route(mux, "GET /v1/members", a.handleMembers)
	a.route(mux, "GET /v1/leader", a.handleLeader)
	a.route(mux, "POST /v1/apply", a.handleApply)
	a.route(mux, "GET /v1/state", a.handleState)
	a.probeRoutes(mux)
	a.jobRoutes(mux)
	// One server for both listeners: Shutdown closes (and unlinks) the socket too.
	lim := a.cfg.HTTP
	a.httpSrv = &http.Server{Handler: lim.withDeadlines(mux), ReadHeaderTimeout: lim.HeaderTimeout, IdleTimeout: lim.IdleTimeout, ConnContext: connContext}
	// Failed TLS handshakes (scanners, plain-HTTP clients) are routine:
	// debug logs, not the standard logger's stderr.
	a.httpSrv.ErrorLog = slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)
	// The connection caps count raw connections, before any handshake. TCP
	// speaks only TLS; the local socket needs none (SO_PEERCRED).
	var lns []net.Listener
	if a.httpLn != nil {
		lns = append(lns, tls.NewListener(lim.limitListener(a.httpLn), a.tls.serverTLS()))
	}
	if a.sockLn != nil {
		lns = append(lns, lim.limitListener(a.sockLn))
	}
	for _, ln := range lns {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := a.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("HTTP API stopped", "listener", ln.Addr().String(), "err", err)
			}
		}()
	}
}

// route registers a handler behind authentication: over TCP (always TLS)
// a request with neither a client certificate of the cluster's CA nor the
// cluster token gets 401 and nothing else; over the local
// socket the kernel's word on the sender stands in for the token (see
// actAs for what a sender may do).
func (a *Agent) route(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if p, local := peerOf(r); local {
			if p.err != nil {
				writeErr(w, http.StatusForbidden, "the agent could not tell who you are: "+p.err.Error())
				return
			}
			if why := singleUserRefusal(a.self, p.uid, r.Method); why != "" {
				writeErr(w, http.StatusForbidden, why)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
			h(w, r)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !certAuthed(r) && (!ok || !tokenOK(tok, a.cfg.Token)) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
			writeErr(w, http.StatusUnauthorized, "missing or wrong cluster token")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r)
	})
}

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

func (a *Agent) handleHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, api.Health{Status: "ok", Name: a.cfg.Name, Boot: a.jobNode.Boot()})
}

func (a *Agent) handleSelf(w http.ResponseWriter, _ *http.Request) {
	e, _ := a.gossip.Node(a.cfg.Name)
	writeJSON(w, http.StatusOK, toAPINode(e))
}

func (a *Agent) handleNodes(w http.ResponseWriter, _ *http.Request) {
	out := []api.Node{}
	for _, e := range a.gossip.Nodes() {
		if e.HasState {
			out = append(out, toAPINode(e))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Agent) handleMembers(w http.ResponseWriter, _ *http.Request) {
	roles := a.roles()
	out := []api.Member{}
	for _, e := range a.gossip.Nodes() {
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

func (a *Agent) handleLeader(w http.ResponseWriter, _ *http.Request) {
	addr, id := a.raft.LeaderWithID()
	if id == "" {
		writeErr(w, http.StatusServiceUnavailable, "no raft leader right now; see 'shoal members'")
		return
	}
	writeJSON(w, http.StatusOK, api.Leader{Name: string(id), Addr: string(addr)})
}

// handleApply takes an encoded command. A forwarded command that reaches a
// node which is not the leader is refused with 503 rather than forwarded
// again, so forwarding never loops.
func (a *Agent) handleApply(w http.ResponseWriter, r *http.Request) {
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
		if a.raft.State() != raft.Leader {
			writeErr(w, http.StatusServiceUnavailable, ErrNotLeader.Error())
			return
		}
		res, err := a.applyLocal(r.Context(), b)
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, res)
		return
	}
	res, err := a.Apply(r.Context(), b)
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
func (a *Agent) handleState(w http.ResponseWriter, r *http.Request) {
	if !privileged(r) {
		// The whole state holds every job's environment (mayReadEnv).
		writeErr(w, http.StatusForbidden, "the raw cluster state needs root or the cluster token")
		return
	}
	if r.URL.Query().Get("consistent") != "" {
		if a.raft.State() != raft.Leader {
			_, id := a.raft.LeaderWithID()
			if id == "" {
				writeErr(w, http.StatusServiceUnavailable, ErrNoLeader.Error())
				return
			}
			base, err := a.httpAddrOf(string(id))
			if err != nil {
				writeErr(w, http.StatusServiceUnavailable, err.Error())
				return
			}
			var st json.RawMessage
			if err := a.peerClient(base).Do(r.Context(), "GET", "/v1/state?consistent=1", nil, &st); err != nil {
				writeErr(w, http.StatusServiceUnavailable, err.Error())
				return
			}
			writeJSON(w, http.StatusOK, st)
			return
		}
		if err := a.raft.VerifyLeader().Error(); err != nil {
			writeErr(w, http.StatusServiceUnavailable, "verify leadership: "+err.Error())
			return
		}
		if err := a.raft.Barrier(5 * time.Second).Error(); err != nil {
			writeErr(w, http.StatusServiceUnavailable, "barrier: "+err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, a.fsm.State())
}
