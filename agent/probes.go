package agent

import "net/http"

// startProbes starts the probe processes and their supervision (issue 5).
// Called from Start after sampling begins.
func (a *Agent) startProbes() {}

// probeRoutes registers the probes' API routes (issue 5).
func (a *Agent) probeRoutes(mux *http.ServeMux) {}
