// Package metrics is the agent's metrics in the Prometheus text format:
// shoal's own (jobs by state, queue length and wait, placement and launch
// time, probe restarts and last-beat age, measured bandwidth and round-trip
// time, gossip convergence), the process's (process_resident_memory_bytes
// is the agent's RSS), and raft's and memberlist's own, which they report
// through go-metrics: InstallGoMetrics points go-metrics' global sink, a
// blackhole until then, at a Prometheus sink.
//
//	m := metrics.New(metrics.Sources{JobsByState: countJobs, QueueLength: queued})
//	if err := metrics.InstallGoMetrics(); err == nil { m.AddGoMetrics() }
//	mux.Handle("GET /v1/metrics", m.Handler())
//	...
//	m.Placement.Observe(time.Since(start).Seconds())
//
// Names follow Prometheus' conventions so `promtool check metrics` accepts
// them: go-metrics' keys (raft.commitTime) become snake case with the shoal_
// prefix (shoal_raft_commit_time) and its counters end in _total.
// Scrape-time values (jobs by state, queue length, beat age, bandwidth) are
// read from Sources at each scrape rather than pushed on every change.
package metrics
