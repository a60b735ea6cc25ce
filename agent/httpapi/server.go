package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-hpc/shoal/agent/events"
	"github.com/shoal-hpc/shoal/agent/ui"
	"github.com/shoal-hpc/shoal/probeplan"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// Config is what the API needs to know of its agent.
type Config struct {
	// Name is the node's name; Boot names this run of the agent (health).
	Name, Boot string
	// Token is the cluster token: a bearer of it is an administrator.
	Token string
	// CapabilityKey signs job capabilities (JobCapability).
	CapabilityKey []byte
	// Self is who the agent runs as: not root makes it single-user.
	Self Identity
	// PublishOutput lets every local user read every job's output
	// (handleLogs); off, only its owner, root and token holders may.
	PublishOutput bool
	// Limits are this agent's per-user limits, checked at submit.
	Limits raftfsm.Limits
	// HTTP bounds requests (RequestTimeout; the listeners' caps are
	// LimitListener's).
	HTTP Limits
	// ProbeStaleAfter is how old a running probe's beat may be before
	// GET /v1/probes shows it stale.
	ProbeStaleAfter time.Duration
	Logger          *slog.Logger
	// Clock reads the time; nil is time.Now.
	Clock func() time.Time
	// Events bounds the event stream (GET /v1/events); zero fields take
	// DefaultEventsConfig's.
	Events EventsConfig
	// Metrics serves GET /v1/metrics (Prometheus text, JSON with
	// ?format=json); nil leaves the route out.
	Metrics http.Handler
	// SessionKey signs the dashboard's session cookies (agent/ui); every
	// agent of the cluster must hold the same. Empty serves no dashboard.
	SessionKey []byte
	// Unhealthy says why this agent cannot vouch for its copy of the
	// replicated state ("" when it can; nil: always can): GET /v1/health
	// reports it, and reads of that state are refused with 503 so that
	// clients ask another agent.
	Unhealthy func() string
}

// DefaultConfig is a config with the production limits; Name and Token
// must still be set.
func DefaultConfig() Config {
	return Config{HTTP: DefaultLimits(), Events: DefaultEventsConfig(), ProbeStaleAfter: probeplan.DefaultSuperviseConfig().StaleAfter, Logger: slog.Default(), Clock: time.Now}
}

// Validate names what is missing or out of bounds.
func (c Config) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("httpapi: the node needs a name")
	case c.Token == "":
		return errors.New("httpapi: the cluster token is empty")
	case len(c.CapabilityKey) == 0:
		return errors.New("httpapi: no key to sign job capabilities")
	}
	if err := c.HTTP.Validate(); err != nil {
		return fmt.Errorf("httpapi: %w", err)
	}
	if err := c.Events.Validate(); err != nil {
		return fmt.Errorf("httpapi: %w", err)
	}
	return nil
}

// Server is the API of one agent.
type Server struct {
	cfg Config
	be  Backend
	log *slog.Logger
	now func() time.Time
	ui  *ui.Server // nil without Config.SessionKey
	// events keeps the stream RunEvents derives for GET /v1/events.
	events *events.Ring
}

// New returns the API of an agent over be.
func New(cfg Config, be Backend) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, be: be, log: cmp.Or(cfg.Logger, slog.Default()), now: cfg.Clock,
		events: events.NewRing(cfg.Events.orDefault().Buffer)}
	if s.now == nil {
		s.now = time.Now
	}
	if len(cfg.SessionKey) > 0 {
		u, err := ui.New(ui.Config{Key: cfg.SessionKey, Token: cfg.Token, Node: cfg.Name, Clock: s.now, Logger: s.log})
		if err != nil {
			return nil, fmt.Errorf("httpapi: %w", err)
		}
		s.ui = u
	}
	return s, nil
}

// Handler is the route table, every request bounded by Limits.RequestTimeout.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", s.handleHealth)
	s.route(mux, "GET /v1/self", s.handleSelf)
	s.route(mux, "GET /v1/nodes", s.handleNodes)
	s.route(mux, "POST /v1/nodes/{name}/drain", s.handleDrain)
	s.route(mux, "POST /v1/nodes/{name}/undrain", s.handleUndrain)
	s.route(mux, "GET /v1/members", s.handleMembers)
	s.route(mux, "GET /v1/operator/snapshot", s.handleSnapshotSave)
	s.routeBody(mux, "POST /v1/operator/snapshot", s.handleSnapshotRestore, maxSnapshot)
	s.route(mux, "GET /v1/operator/raft/peers", s.handleRaftPeers)
	s.route(mux, "POST /v1/operator/raft/remove-peer", s.handleRemovePeer)
	s.route(mux, "GET /v1/leader", s.handleLeader)
	s.route(mux, "GET /v1/read-index", s.handleReadIndex)
	s.route(mux, "POST /v1/apply", s.handleApply)
	s.route(mux, "GET /v1/state", s.vouched(s.handleState))
	s.route(mux, "GET /v1/net", s.handleNet)
	mux.HandleFunc("POST /v1/netrow", refuseJobs("network rows", s.guard(s.handleNetRow, maxNetRowBody)))
	mux.HandleFunc("POST /v1/lease", refuseJobs("lease renewals", s.guard(s.handleLease, maxBody)))
	s.route(mux, "GET /v1/probes", s.handleProbes)
	s.route(mux, "POST /v1/jobs", s.handleSubmit)
	s.route(mux, "GET /v1/jobs", s.vouched(s.handleJobs))
	s.route(mux, "GET /v1/jobs/{id}", s.vouched(s.handleJob))
	s.route(mux, "GET /v1/history", s.vouched(s.handleHistory))
	s.route(mux, "GET /v1/events", s.handleEvents)
	s.route(mux, "POST /v1/jobs/{id}/kill", s.handleKill)
	s.route(mux, "POST /v1/jobs/{id}/hold", s.handleHold(true))
	s.route(mux, "POST /v1/jobs/{id}/release", s.handleHold(false))
	s.route(mux, "POST /v1/jobs/{id}/update", s.handleUpdate)
	s.route(mux, "POST /v1/jobs/{id}/requeue", s.handleRequeue)
	s.route(mux, "GET /v1/partitions", s.handlePartitions)
	s.route(mux, "POST /v1/partitions", s.handleSetPartition)
	s.route(mux, "POST /v1/partitions/{name}/delete", s.handleDeletePartition)
	s.routeBody(mux, "POST /v1/jobs/{id}/stdin", s.handleStdin, 0) // a stream: no bound on its size
	s.route(mux, "GET /v1/jobs/{id}/logs", s.handleLogs)
	s.route(mux, "GET /v1/jobs/{id}/placement", s.handlePlacement)
	s.route(mux, "POST /v1/alloc", s.handleAlloc)
	if s.cfg.Metrics != nil {
		s.route(mux, "GET /v1/metrics", s.cfg.Metrics.ServeHTTP)
	}
	// progress comes from inside jobs: a job capability is enough there too.
	mux.HandleFunc("POST /v1/jobs/{id}/progress", s.handleProgress)
	// replicate has its own check: agents only, and a stream.
	mux.HandleFunc("GET /v1/replicate", s.handleReplicate)
	// exec has its own check: a job capability is enough there.
	mux.HandleFunc("POST /v1/exec", s.handleExec)
	if s.ui != nil {
		// The dashboard authenticates its own pages (a login page to a
		// browser without a session) and the API takes its cookie (guard).
		mux.Handle("/ui/", s.ui)
		mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	}
	return s.cfg.HTTP.withDeadlines(mux)
}

// route registers a handler behind authentication: over TCP (always TLS)
// a request with neither a client certificate of the cluster's CA nor the
// cluster token gets 401 and nothing else; over the local
// socket the kernel's word on the sender stands in for the token (see
// actAs for what a sender may do).
func (s *Server) route(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	s.routeBody(mux, pattern, h, maxBody)
}

// routeBody is route with a bound on the request body of maxBytes; 0 for
// none (a stream, like a job's standard input).
func (s *Server) routeBody(mux *http.ServeMux, pattern string, h http.HandlerFunc, maxBytes int64) {
	mux.HandleFunc(pattern, s.guard(h, maxBytes))
}

// guard is h behind routeBody's authentication and body bound.
func (s *Server) guard(h http.HandlerFunc, maxBytes int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p, local := peerOf(r); local {
			if p.err != nil {
				writeErr(w, http.StatusForbidden, "the agent could not tell who you are: "+p.err.Error())
				return
			}
			if why := singleUserRefusal(s.cfg.Self, p.uid, r.Method); why != "" {
				writeErr(w, http.StatusForbidden, why)
				return
			}
			if maxBytes > 0 {
				r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
			}
			h(w, r)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		authed := certAuthed(r) || (ok && tokenOK(tok, s.cfg.Token))
		if !authed {
			// A browser's session cookie; never checked beside the token,
			// so a CLI is never refused for a stale cookie it cannot hold.
			err := s.sessionAuth(r)
			if errors.Is(err, ui.ErrCrossSite) {
				writeErr(w, http.StatusForbidden, err.Error())
				return
			}
			authed = err == nil
		}
		if !authed {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shoal"`)
			writeErr(w, http.StatusUnauthorized, "missing or wrong cluster token")
			return
		}
		if maxBytes > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
		}
		h(w, r)
	}
}

// sessionAuth checks r for a dashboard session: a browser that logged in
// with the cluster token, so an administrator like a holder of it. It
// returns ui.ErrCrossSite for a write with the cookie but without the
// session's CSRF token or from another origin.
func (s *Server) sessionAuth(r *http.Request) error {
	if s.ui == nil {
		return ui.ErrNoSession
	}
	_, err := s.ui.Authorize(r)
	return err
}
