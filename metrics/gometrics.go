package metrics

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	gometrics "github.com/hashicorp/go-metrics/compat"
	gmprom "github.com/hashicorp/go-metrics/compat/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// go-metrics' sink is global to the process: raft and memberlist report to
// it, through github.com/hashicorp/go-metrics/compat (armon/go-metrics
// unless built with -tags hashicorpmetrics; compat here follows the same
// tag). One agent per process is the production case; in-process test
// clusters share it.
var (
	installOnce sync.Once
	installErr  error
	goSink      *gmprom.PrometheusSink
)

// InstallGoMetrics replaces go-metrics' global blackhole sink with a
// Prometheus sink, once per process; later calls return the first result.
func InstallGoMetrics() error {
	installOnce.Do(func() {
		opts := gmprom.DefaultPrometheusOpts
		// Gauges nobody updates for this long disappear (a removed peer).
		opts.Expiration = 5 * time.Minute
		goSink, installErr = gmprom.NewPrometheusSinkFrom(opts)
		if installErr != nil {
			installErr = fmt.Errorf("create the go-metrics Prometheus sink: %w", installErr)
			return
		}
		conf := gometrics.DefaultConfig(Namespace)
		conf.EnableHostname = false       // one agent per scrape target
		conf.EnableRuntimeMetrics = false // the Go collector has them
		conf.EnableServiceLabel = false
		if _, err := gometrics.NewGlobal(conf, &conventionalSink{next: goSink}); err != nil {
			installErr = fmt.Errorf("install the go-metrics global sink: %w", err)
		}
	})
	return installErr
}

// AddGoMetrics adds what raft and memberlist report through go-metrics to
// m. InstallGoMetrics must have succeeded.
func (m *Metrics) AddGoMetrics() error {
	if goSink == nil {
		return fmt.Errorf("go-metrics sink not installed: call InstallGoMetrics first")
	}
	if err := m.reg.Register(goSink); err != nil {
		if _, ok := err.(prometheus.AlreadyRegisteredError); !ok {
			return fmt.Errorf("register the go-metrics sink: %w", err)
		}
	}
	return nil
}

// conventionalSink renames go-metrics' keys to Prometheus' conventions
// before the Prometheus sink sees them: snake case (raft.commitTime becomes
// raft_commit_time) and counters ending in _total.
type conventionalSink struct{ next gometrics.MetricSink }

func (s *conventionalSink) SetGauge(key []string, val float32) {
	s.next.SetGauge(snake(key), val)
}
func (s *conventionalSink) SetGaugeWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.next.SetGaugeWithLabels(snake(key), val, snakeLabels(labels))
}
func (s *conventionalSink) EmitKey(key []string, val float32) { s.next.EmitKey(snake(key), val) }
func (s *conventionalSink) IncrCounter(key []string, val float32) {
	s.next.IncrCounter(total(snake(key)), val)
}
func (s *conventionalSink) IncrCounterWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.next.IncrCounterWithLabels(total(snake(key)), val, snakeLabels(labels))
}
func (s *conventionalSink) AddSample(key []string, val float32) { s.next.AddSample(snake(key), val) }
func (s *conventionalSink) AddSampleWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.next.AddSampleWithLabels(snake(key), val, snakeLabels(labels))
}

func total(key []string) []string {
	if n := len(key); n > 0 && !strings.HasSuffix(key[n-1], "_total") {
		key[n-1] += "_total"
	}
	return key
}

func snake(key []string) []string {
	out := make([]string, len(key))
	for i, p := range key {
		out[i] = snakeCase(p)
	}
	return out
}

func snakeLabels(ls []gometrics.Label) []gometrics.Label {
	out := make([]gometrics.Label, len(ls))
	for i, l := range ls {
		out[i] = gometrics.Label{Name: snakeCase(l.Name), Value: l.Value}
	}
	return out
}

// snakeCase turns commitTime, RPC.appendEntries and fsm-apply into
// commit_time, rpc_append_entries and fsm_apply.
func snakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '.' || r == '-' || r == ' ' || r == '/':
			b.WriteByte('_')
		case unicode.IsUpper(r):
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
