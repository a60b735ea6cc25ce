package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"

	"github.com/shoal-hpc/shoal/agent/httpapi"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// HTTPLimits bound the API server's connections and timeouts (httpapi.Limits).
type HTTPLimits = httpapi.Limits

// DefaultHTTPLimits returns the production limits.
func DefaultHTTPLimits() HTTPLimits { return httpapi.DefaultLimits() }

// capabilityKey signs job capabilities: derived from the token, so every
// agent checks what any agent issued.
func capabilityKey(token string) []byte { return derive(token, "job-capability") }

// jobCapabilities signs with key the capability of an attempt's processes
// (jobrun.Deps.JobCapability), as httpapi checks it.
func jobCapabilities(key []byte) func(*raftfsm.Job, *raftfsm.Attempt) string {
	return func(j *raftfsm.Job, att *raftfsm.Attempt) string { return httpapi.JobCapability(key, j, att) }
}

// startHTTP serves agent/httpapi on the TLS listener and the local socket.
func (a *Agent) startHTTP() error {
	stale := a.cfg.Probes.OrDefault().Supervise.StaleAfter
	srv, err := httpapi.New(httpapi.Config{Name: a.cfg.Name, Boot: a.jobNode.Boot(), Token: a.cfg.Token,
		CapabilityKey: capabilityKey(a.cfg.Token), Self: a.self, Limits: a.cfg.Limits, HTTP: a.cfg.HTTP, PublishOutput: a.cfg.PublishOutput,
		ProbeStaleAfter: stale, Logger: a.log, Clock: a.clock, Metrics: a.startMetrics(), SessionKey: derive(a.cfg.Token, "ui-session"),
		Unhealthy: a.LogFault},
		&httpBackend{gossip: a.gossip, srv: &a.srv, fsm: a.fsm, stateIndex: &a.stateIndex, now: a.clock, dataDir: a.cfg.DataDir, writeTimeout: a.cfg.WriteTimeout,
			applier: a.applier, peers: a.peers, elastic: a.elastic, jobNode: a.jobNode, progress: a.progress, rows: a.rows, feed: a.feed,
			modelWait: a.cfg.PlacementModelWait, placements: a.placements, renewLease: a.renewLocal, led: &a.led})
	if err != nil {
		return err
	}
	a.stateIndex.Raise(a.fsm.Index())
	a.loops.run("state-index", func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case <-a.appliedEvents:
				a.stateIndex.Raise(a.fsm.Index())
			}
		}
	})
	a.loops.run("events", srv.RunEvents)
	// One server for both listeners: Shutdown closes (and unlinks) the socket too.
	lim := a.cfg.HTTP
	a.httpSrv = &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: lim.HeaderTimeout, IdleTimeout: lim.IdleTimeout,
		ConnContext: httpapi.ConnContext}
	// Failed TLS handshakes (scanners, plain-HTTP clients) are routine:
	// debug logs, not the standard logger's stderr.
	a.httpSrv.ErrorLog = slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)
	// The connection caps count raw connections, before any handshake. TCP
	// speaks only TLS; the local socket needs none (SO_PEERCRED).
	var lns []net.Listener
	if a.httpLn != nil {
		lns = append(lns, tls.NewListener(lim.LimitListener(a.httpLn), a.tls.serverTLS()))
	}
	if a.sockLn != nil {
		lns = append(lns, lim.LimitListener(a.sockLn))
	}
	for _, ln := range lns {
		a.loops.run("http", func(context.Context) {
			if err := a.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("HTTP API stopped", "listener", ln.Addr().String(), "err", err)
			}
		})
	}
	return nil
}
