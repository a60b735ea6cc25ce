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
	// Probes are this node's probe processes (nodestate, latency,
	// bandwidth): shoal_probe_restarts_total{probe} and
	// shoal_probe_last_beat_age_seconds{probe}.
	Probes func() []Probe
	// Bandwidth is the last measured bandwidth from this node to each peer,
	// bytes per second: shoal_bandwidth_bytes_per_second{peer}.
	Bandwidth func() map[string]float64
	// RTT is the mean round-trip time from this node to each peer:
	// shoal_rtt_seconds{peer}.
	RTT func() map[string]time.Duration
	// GossipUndecryptable counts the gossip messages this node dropped
	// because they failed to decrypt, UDP packets and TCP streams (a node
	// with another token, or a stranger):
	// shoal_gossip_undecryptable_total{transport}.
	GossipUndecryptable func() (packets, streams uint64)
	// RaftLogWritable says whether this node's raft log takes writes
	// (server false on a client, which has none and reports nothing):
	// shoal_raft_log_writable, 0 on a server with a full or read-only
	// disk, whose copy of the state has stopped moving.
	RaftLogWritable func() (writable, server bool)
}

// Probe is one probe process as its supervisor reports it.
type Probe struct {
	Kind string
	// Restarts since the agent started (the supervisor's count).
	Restarts int
	// BeatAge is the time since the last heartbeat; negative when there
	// was none yet (the age is then left out).
	BeatAge time.Duration
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
	// GossipConvergence is how long each change of another node's state
	// took to reach this node by broadcast (gossip's OnPropagation: the
	// owner's publication to the arrival here). The cluster's convergence
	// is the slowest node's: the maximum over every agent's histogram.
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
		GossipConvergence: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "gossip_convergence_seconds",
			Help:    "Time from a node-state change at its owner to its arrival at this node by broadcast (owner's clock against this node's).",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10), // 50 ms .. ~26 s
		}),
	}
	reg.MustRegister(m.QueueWait, m.Placement, m.Launch, m.GossipConvergence,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&scrapeGauges{src: src})
	return m
}

// Registry is where the metrics live, for a handler or a test to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

var (
	jobsDesc      = prometheus.NewDesc(Namespace+"_jobs", "Jobs in the cluster's state, by state.", []string{"state"}, nil)
	queueDesc     = prometheus.NewDesc(Namespace+"_queue_length", "Jobs waiting for placement.", nil, nil)
	oldestDesc    = prometheus.NewDesc(Namespace+"_queue_oldest_wait_seconds", "How long the longest-waiting queued job has waited.", nil, nil)
	beatDesc      = prometheus.NewDesc(Namespace+"_probe_last_beat_age_seconds", "Time since a probe process's last heartbeat.", []string{"probe"}, nil)
	restartsDesc  = prometheus.NewDesc(Namespace+"_probe_restarts_total", "Restarts of a probe process by the agent's supervisor since the agent started.", []string{"probe"}, nil)
	rttDesc       = prometheus.NewDesc(Namespace+"_rtt_seconds", "Mean round-trip time from this node to a peer, over the last minute.", []string{"peer"}, nil)
	bwDesc        = prometheus.NewDesc(Namespace+"_bandwidth_bytes_per_second", "Last measured bandwidth from this node to a peer.", []string{"peer"}, nil)
	undecryptDesc = prometheus.NewDesc(Namespace+"_gossip_undecryptable_total",
		"Gossip messages dropped because they failed to decrypt (another cluster token, or a stranger), by transport: udp packets, tcp streams.", []string{"transport"}, nil)
	raftLogDesc = prometheus.NewDesc(Namespace+"_raft_log_writable",
		"1 while this raft server's log takes writes, 0 when it cannot be written (a full or read-only disk): the server's state is then stale and it steps down as voter.", nil, nil)
)

// scrapeGauges reads Sources when scraped, so the agent need not push a
// gauge on every job transition.
type scrapeGauges struct{ src Sources }

func (g *scrapeGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- queueDesc
	ch <- oldestDesc
	ch <- restartsDesc
	ch <- beatDesc
	ch <- bwDesc
	ch <- rttDesc
	ch <- undecryptDesc
	ch <- raftLogDesc
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
	if g.src.Probes != nil {
		for _, p := range g.src.Probes() {
			ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(p.Restarts), p.Kind)
			if p.BeatAge >= 0 {
				ch <- prometheus.MustNewConstMetric(beatDesc, prometheus.GaugeValue, p.BeatAge.Seconds(), p.Kind)
			}
		}
	}
	if g.src.Bandwidth != nil {
		for peer, bps := range g.src.Bandwidth() {
			ch <- prometheus.MustNewConstMetric(bwDesc, prometheus.GaugeValue, bps, peer)
		}
	}
	if g.src.RTT != nil {
		for peer, rtt := range g.src.RTT() {
			ch <- prometheus.MustNewConstMetric(rttDesc, prometheus.GaugeValue, rtt.Seconds(), peer)
		}
	}
	if g.src.GossipUndecryptable != nil {
		packets, streams := g.src.GossipUndecryptable()
		ch <- prometheus.MustNewConstMetric(undecryptDesc, prometheus.CounterValue, float64(packets), "udp")
		ch <- prometheus.MustNewConstMetric(undecryptDesc, prometheus.CounterValue, float64(streams), "tcp")
	}
	if g.src.RaftLogWritable != nil {
		if ok, server := g.src.RaftLogWritable(); server {
			v := 0.0
			if ok {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(raftLogDesc, prometheus.GaugeValue, v)
		}
	}
}
