package metrics

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Handler serves the metrics: the Prometheus text format, or JSON with
// ?format=json (for scripts without a Prometheus parser).
func (m *Metrics) Handler() http.Handler {
	text := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" {
			text.ServeHTTP(w, r)
			return
		}
		fams, err := m.reg.Gather()
		if err != nil && len(fams) == 0 {
			http.Error(w, "gather metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(toJSON(fams))
	})
}

// Family is one metric family in the JSON form.
type Family struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Type    string   `json:"type"`
	Metrics []Sample `json:"metrics"`
}

// Sample is one metric of a family: a value (counter, gauge), or a count,
// a sum and buckets (histogram, upper bound → cumulative count) or
// quantiles (summary).
type Sample struct {
	Labels    map[string]string  `json:"labels,omitempty"`
	Value     *float64           `json:"value,omitempty"`
	Count     *uint64            `json:"count,omitempty"`
	Sum       *float64           `json:"sum,omitempty"`
	Buckets   map[string]uint64  `json:"buckets,omitempty"`
	Quantiles map[string]float64 `json:"quantiles,omitempty"`
}

func toJSON(fams []*dto.MetricFamily) []Family {
	out := make([]Family, 0, len(fams))
	for _, f := range fams {
		fam := Family{Name: f.GetName(), Help: f.GetHelp(), Type: f.GetType().String()}
		for _, m := range f.GetMetric() {
			s := Sample{}
			if len(m.GetLabel()) > 0 {
				s.Labels = map[string]string{}
				for _, l := range m.GetLabel() {
					s.Labels[l.GetName()] = l.GetValue()
				}
			}
			switch {
			case m.Counter != nil:
				s.Value = finite(m.Counter.Value)
			case m.Gauge != nil:
				s.Value = finite(m.Gauge.Value)
			case m.Untyped != nil:
				s.Value = finite(m.Untyped.Value)
			case m.Histogram != nil:
				s.Count, s.Sum = m.Histogram.SampleCount, m.Histogram.SampleSum
				s.Buckets = map[string]uint64{}
				for _, b := range m.Histogram.GetBucket() {
					s.Buckets[strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)] = b.GetCumulativeCount()
				}
			case m.Summary != nil:
				s.Count, s.Sum = m.Summary.SampleCount, m.Summary.SampleSum
				s.Quantiles = map[string]float64{}
				for _, q := range m.Summary.GetQuantile() {
					if finite(q.Value) == nil { // no sample in the window
						continue
					}
					s.Quantiles[strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)] = q.GetValue()
				}
			}
			fam.Metrics = append(fam.Metrics, s)
		}
		out = append(out, fam)
	}
	return out
}

// finite drops NaN and infinities, which JSON cannot hold.
func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}
