package metrics

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// grafanaDashboard is the dashboard packaging/ ships for these metrics.
const grafanaDashboard = "../packaging/grafana/shoal-dashboard.json"

// goMetricsSamples are the raft figures the dashboard reads, as raft
// reports them to go-metrics (MeasureSince: a summary once exported).
var goMetricsSamples = [][]string{{"raft", "commitTime"}}

// exportedNames are the series names an agent's /v1/metrics exposes: its
// own metrics with every source set and the Go runtime's, from a scrape,
// and the go-metrics samples above under the names the conventional sink
// gives them (not emitted here: the sink is global, and other tests count
// what raft's calls leave in it). A histogram or summary also exposes
// NAME_bucket (histograms), NAME_sum and NAME_count.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	src := testSources()
	src.QueueOldestWait = func() time.Duration { return time.Minute }
	m := New(src)
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(scrape(t, m, "")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		switch f[3] {
		case "histogram":
			names[f[2]+"_bucket"] = true
			fallthrough
		case "summary":
			names[f[2]+"_sum"], names[f[2]+"_count"] = true, true
		}
	}
	for _, key := range goMetricsSamples {
		n := Namespace + "_" + strings.Join(snake(key), "_")
		names[n], names[n+"_sum"], names[n+"_count"] = true, true, true
	}
	return names
}

var (
	promStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promBraces  = regexp.MustCompile(`\{[^}]*\}`)
	promRanges  = regexp.MustCompile(`\[[^\]]*\]`)
	promGroups  = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent   = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promWords   = []string{"and", "or", "unless", "bool", "offset", "group_left", "group_right", "inf", "nan"}
)

// queryMetrics lists the metric names a PromQL expression reads: its
// identifiers once label matchers, strings, ranges and grouping clauses
// are gone, less function calls and keywords.
func queryMetrics(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promBraces.ReplaceAllString(e, " ")
	e = promRanges.ReplaceAllString(e, " ")
	e = promGroups.ReplaceAllString(e, " ")
	var out []string
	for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
		if m[1] != "" || slices.Contains(promWords, strings.ToLower(m[0])) {
			continue // a function, or a keyword
		}
		out = append(out, m[0])
	}
	return out
}

// TestGrafanaDashboard_QueriesNameExportedMetrics: every query of the
// Grafana dashboard in packaging/, panels and template variables alike,
// reads at least one metric and only metrics an agent exports, so a
// renamed metric cannot leave a panel silently empty.
func TestGrafanaDashboard_QueriesNameExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(grafanaDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", grafanaDashboard, err)
	}
	type query struct{ where, expr string }
	var qs []query
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			qs = append(qs, query{"panel " + p.Title, tg.Expr})
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((\w+),\s*\w+\)$`)
	for _, v := range dash.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil || q.Query == "" {
			continue // a data source variable: no query
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(METRIC, LABEL)", v.Name, q.Query)
			continue
		}
		qs = append(qs, query{"variable " + v.Name, m[1]})
	}
	if len(qs) < 10 {
		t.Fatalf("%d queries in the dashboard: want one per panel at least", len(qs))
	}
	names := exportedNames(t)
	for _, q := range qs {
		ms := queryMetrics(q.expr)
		if len(ms) == 0 {
			t.Errorf("%s: %q reads no metric", q.where, q.expr)
		}
		for _, m := range ms {
			if !names[m] {
				t.Errorf("%s: %q reads %s, which shoal does not export", q.where, q.expr, m)
			}
		}
	}
}

// The parser of the test above finds what a query reads, and only that.
func TestQueryMetrics(t *testing.T) {
	for expr, want := range map[string][]string{
		`max by (state) (shoal_jobs{instance=~"$instance"})`:                                      {"shoal_jobs"},
		`histogram_quantile(0.95, sum by (le) (rate(shoal_placement_seconds_bucket{a="b"}[5m])))`: {"shoal_placement_seconds_bucket"},
		`shoal_bandwidth_bytes_per_second * 8 / on (instance) group_left up`:                      {"shoal_bandwidth_bytes_per_second", "up"},
		`rate(x_total{l="with } brace"}[1h]) and y`:                                               {"x_total", "y"},
	} {
		if got := queryMetrics(expr); !slices.Equal(got, want) {
			t.Errorf("queryMetrics(%q) = %v, want %v", expr, got, want)
		}
	}
}
