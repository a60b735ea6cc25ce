package metrics

import (
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
)

func scrape(t *testing.T, m *Metrics, query string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/metrics"+query, nil))
	if rec.Code != 200 {
		t.Fatalf("GET /v1/metrics%s: %d %s", query, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// promtool runs Debian's `promtool check metrics` (package prometheus) on
// an exposition; the test skips, saying so, where promtool is missing.
func promtool(t *testing.T, exposition string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus, or make deps): cannot check the exposition")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics refused the exposition: %v\n%s", err, out)
	}
}

func testSources() Sources {
	return Sources{
		JobsByState: func() map[string]int { return map[string]int{"queued": 2, "running": 1, "done": 7} },
		QueueLength: func() int { return 2 },
		Probes: func() []Probe {
			return []Probe{{Kind: "latency", Restarts: 1, BeatAge: 1500 * time.Millisecond}, {Kind: "bandwidth", BeatAge: -1}}
		},
		Bandwidth:           func() map[string]float64 { return map[string]float64{"n2": 1.1e9} },
		RTT:                 func() map[string]time.Duration { return map[string]time.Duration{"n2": 250 * time.Microsecond} },
		GossipUndecryptable: func() (uint64, uint64) { return 300, 2 },
		RaftLogWritable:     func() (bool, bool) { return false, true },
	}
}

// What raft and memberlist report through go-metrics, and shoal's own
// metrics, come out in a text format promtool accepts, under their names.
func TestExpositionPromtoolAccepts(t *testing.T) {
	if err := InstallGoMetrics(); err != nil {
		t.Fatal(err)
	}
	m := New(testSources())
	if err := m.AddGoMetrics(); err != nil {
		t.Fatal(err)
	}
	// As raft and memberlist call go-metrics.
	gometrics.MeasureSince([]string{"raft", "commitTime"}, time.Now().Add(-3*time.Millisecond))
	gometrics.IncrCounter([]string{"raft", "state", "leader"}, 1)
	gometrics.SetGauge([]string{"raft", "peers"}, 3)
	gometrics.IncrCounterWithLabels([]string{"memberlist", "msg", "alive"}, 1, []gometrics.Label{{Name: "nodeName", Value: "n1"}})
	gometrics.AddSampleWithLabels([]string{"memberlist", "gossip"}, 0.2, nil)
	m.Placement.Observe(0.004)
	m.QueueWait.Observe(1.5)
	m.Launch.Observe(0.3)
	m.GossipConvergence.Observe(0.8)

	text := scrape(t, m, "")
	for _, want := range []string{
		`shoal_jobs{state="queued"} 2`, `shoal_jobs{state="done"} 7`, `shoal_queue_length 2`,
		`shoal_probe_last_beat_age_seconds{probe="latency"} 1.5`, `shoal_bandwidth_bytes_per_second{peer="n2"} 1.1e+09`, `shoal_rtt_seconds{peer="n2"} 0.00025`,
		`shoal_placement_seconds_count 1`, `shoal_job_queue_wait_seconds_count 1`, `shoal_job_launch_seconds_count 1`,
		`shoal_probe_restarts_total{probe="latency"} 1`, `shoal_probe_restarts_total{probe="bandwidth"} 0`, `shoal_gossip_convergence_seconds_count 1`,
		`shoal_gossip_undecryptable_total{transport="udp"} 300`, `shoal_gossip_undecryptable_total{transport="tcp"} 2`,
		"shoal_raft_log_writable 0", "process_resident_memory_bytes ", "go_goroutines ",
		"shoal_raft_commit_time_count 1", "shoal_raft_state_leader_total 1", "shoal_raft_peers 3",
		`shoal_memberlist_msg_alive_total{node_name="n1"} 1`, "shoal_memberlist_gossip_count 1",
	} {
		if !strings.Contains(text, "\n"+want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	if strings.Contains(text, `shoal_probe_last_beat_age_seconds{probe="bandwidth"}`) {
		t.Error("a beat age for a probe that never beat")
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", text)
	}
	promtool(t, text)
}

func TestJSON(t *testing.T) {
	t.Parallel()
	m := New(testSources())
	m.Placement.Observe(0.004)
	var fams []Family
	if err := json.NewDecoder(strings.NewReader(scrape(t, m, "?format=json"))).Decode(&fams); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range fams {
		switch f.Name {
		case "shoal_jobs":
			for _, s := range f.Metrics {
				if s.Labels["state"] == "running" && s.Value != nil && *s.Value == 1 {
					found++
				}
			}
		case "shoal_placement_seconds":
			if f.Type == "HISTOGRAM" && *f.Metrics[0].Count == 1 && f.Metrics[0].Buckets["0.004"] == 1 {
				found++
			}
		}
	}
	if found != 2 {
		b, _ := json.MarshalIndent(fams, "", " ")
		t.Fatalf("JSON lacks shoal_jobs{running}=1 or the placement histogram:\n%s", b)
	}
}

func TestSnakeCase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"commitTime": "commit_time", "RPC": "rpc", "appendEntries": "append_entries", "fsm-apply": "fsm_apply",
		"FSM.apply": "fsm_apply", "nodeName": "node_name", "lastIndex2Term": "last_index2_term", "already_snake": "already_snake",
		"HTTPServer": "http_server",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each attempt's queue wait and launch time are observed once, however
// often the state is handed in.
func TestObserveAttemptsOnce(t *testing.T) {
	t.Parallel()
	m := New(Sources{})
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	queued := []Attempt{{Job: 1, Attempt: 1, Waited: t0}}
	placed := []Attempt{{Job: 1, Attempt: 1, Waited: t0, Placed: t0.Add(2 * time.Second)}}
	running := []Attempt{{Job: 1, Attempt: 1, Waited: t0, Placed: t0.Add(2 * time.Second), Started: t0.Add(2500 * time.Millisecond)},
		{Job: 2, Attempt: 1, Waited: t0, Placed: t0.Add(time.Second)}}
	for _, l := range [][]Attempt{queued, placed, placed, running, running} {
		m.ObserveAttempts(l)
	}
	text := scrape(t, m, "")
	for _, want := range []string{"shoal_job_queue_wait_seconds_count 2", "shoal_job_queue_wait_seconds_sum 3",
		"shoal_job_launch_seconds_count 1", "shoal_job_launch_seconds_sum 0.5"} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("lacks %q", want)
		}
	}
	m.ObserveAttempts(nil) // every job purged
	if n := len(m.att.seen); n != 0 {
		t.Errorf("%d purged attempts remembered", n)
	}
}
