package metrics

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every metric of shoal's own and of go-metrics.
const Namespace = "shoal"

// Sources are read at every scrape; a nil one is left out.
type Sources struct {
	// JobsByState counts the jobs in raft's state by state (queued,
	// running, done, failed, killed, ...): shoal_jobs{state}.
	JobsByState func() map[string]int
	// QueueLength is the number of jobs waiting for placement:
	// shoal_queue_length.
	QueueLength func() int
	// QueueOldestWait is how long the longest-waiting queued job has
	// waited: shoal_queue_oldest_wait_seconds.
	QueueOldestWait func() time.Duration
	// ProbeBeatAge is, per probe process (nodestate, latency, bandwidth),
	// the time since its last heartbeat: shoal_probe_last_beat_age_seconds.
	ProbeBeatAge func() map[string]time.Duration
	// Bandwidth is the last measured bandwidth from this node to each peer,
	// bytes per second: shoal_bandwidth_bytes_per_second{peer}.
	Bandwidth func() map[string]float64
}

// Metrics is one agent's registry and shoal's own metrics. The agent
// observes the histograms and counters where the events happen.
type Metrics struct {
	reg *prometheus.Registry

	// QueueWait is how long a job waited from submission to placement.
	QueueWait prometheus.Histogram
	// Placement is how long the leader took to place one job (placement
	// and the raft write of the allocation).
	Placement prometheus.Histogram
	// Launch is how long a job took from placement to every rank running.
	Launch prometheus.Histogram
	// ProbeRestarts counts restarts of a probe process, by probe.
	ProbeRestarts *prometheus.CounterVec
	// GossipConvergence is how long a node-state change took to reach
	// every alive node.
	GossipConvergence prometheus.Histogram

	att attempts
}

// New returns the metrics of one agent, with the Go runtime's and the
// process's collectors and the scrape-time gauges of src.
func New(src Sources) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		QueueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "job_queue_wait_seconds",
			Help:    "Time from a job's submission to its placement.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10), // 10 ms .. ~44 min
		}),
		Placement: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "placement_seconds",
			Help:    "Time the leader took to place one job, the raft write of its allocation included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms .. ~4 s
		}),
		Launch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "job_launch_seconds",
			Help:    "Time from a job's placement to every rank running.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12), // 10 ms .. ~20 s
		}),
		ProbeRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "probe_restarts_total",
			Help: "Restarts of a probe process by the agent's supervisor.",
		}, []string{"probe"}),
		GossipConvergence: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "gossip_convergence_seconds",
			Help:    "Time a node-state change took to reach every alive node.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10), // 50 ms .. ~26 s
		}),
	}
	reg.MustRegister(m.QueueWait, m.Placement, m.Launch, m.ProbeRestarts, m.GossipConvergence,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&scrapeGauges{src: src})
	return m
}

// Registry is where the metrics live, for a handler or a test to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

var (
	jobsDesc   = prometheus.NewDesc(Namespace+"_jobs", "Jobs in the cluster's state, by state.", []string{"state"}, nil)
	queueDesc  = prometheus.NewDesc(Namespace+"_queue_length", "Jobs waiting for placement.", nil, nil)
	oldestDesc = prometheus.NewDesc(Namespace+"_queue_oldest_wait_seconds", "How long the longest-waiting queued job has waited.", nil, nil)
	beatDesc   = prometheus.NewDesc(Namespace+"_probe_last_beat_age_seconds", "Time since a probe process's last heartbeat.", []string{"probe"}, nil)
	bwDesc     = prometheus.NewDesc(Namespace+"_bandwidth_bytes_per_second", "Last measured bandwidth from this node to a peer.", []string{"peer"}, nil)
)

// scrapeGauges reads Sources when scraped, so the agent need not push a
// gauge on every job transition.
type scrapeGauges struct{ src Sources }

func (g *scrapeGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- queueDesc
	ch <- oldestDesc
	ch <- beatDesc
	ch <- bwDesc
}

func (g *scrapeGauges) Collect(ch chan<- prometheus.Metric) {
	if g.src.JobsByState != nil {
		byState := g.src.JobsByState()
		for _, s := range slices.Sorted(maps.Keys(byState)) {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(byState[s]), s)
		}
	}
	if g.src.QueueLength != nil {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(g.src.QueueLength()))
	}
	if g.src.QueueOldestWait != nil {
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, g.src.QueueOldestWait().Seconds())
	}
	if g.src.ProbeBeatAge != nil {
		for p, age := range g.src.ProbeBeatAge() {
			ch <- prometheus.MustNewConstMetric(beatDesc, prometheus.GaugeValue, age.Seconds(), p)
		}
	}
	if g.src.Bandwidth != nil {
		for peer, bps := range g.src.Bandwidth() {
			ch <- prometheus.MustNewConstMetric(bwDesc, prometheus.GaugeValue, bps, peer)
		}
	}
}
