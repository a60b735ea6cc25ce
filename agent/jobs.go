package agent

import "net/http"

// startJobs starts the job reconcilers (issue 6).
func (a *Agent) startJobs() {}

// jobRoutes registers the jobs' API routes (issue 6).
func (a *Agent) jobRoutes(mux *http.ServeMux) {}
