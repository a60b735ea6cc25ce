package metrics_test

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/probe"
	"github.com/shoal-hpc/shoal/testcluster"
)

type idle struct{}

func (idle) Sample(context.Context) (probe.RawSample, error) {
	return probe.RawSample{At: time.Now(), MemAvail: 8 << 30}, nil
}

// scrapers hold one HTTP client per cluster for the whole test: a client
// per scrape would leave its connection open and soon meet the agent's
// per-source cap.
var scrapers sync.Map // *testcluster.Cluster -> *http.Client

func scraperOf(c *testcluster.Cluster) *http.Client {
	cl, _ := scrapers.LoadOrStore(c, &http.Client{Transport: &http.Transport{TLSClientConfig: testcluster.ClientTLS(c.Token())}, Timeout: 10 * time.Second})
	return cl.(*http.Client)
}

// scrapeAgent reads GET /v1/metrics of agent i with the cluster token.
func scrapeAgent(t *testing.T, c *testcluster.Cluster, i int) string {
	t.Helper()
	cl := c.Client(i)
	req, err := http.NewRequest("GET", cl.Addr()+"/v1/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token())
	resp, err := scraperOf(c).Do(req)
	if err != nil {
		t.Fatalf("GET /v1/metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// value is the value of the sample line that starts with series, or -1.
func value(text, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// GET /v1/metrics of a real two-node cluster: raft's and memberlist's own
// metrics land in it instead of go-metrics' blackhole, the job metrics
// move when a job runs, gossip's propagation times are fed, and promtool
// accepts the whole exposition.
func TestAgentMetricsEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a two-node cluster and runs a job")
	}
	c := testcluster.New(t, 2, testcluster.Options{
		Bin:     testcluster.BuildShoal(t),
		Sampler: func(int) probe.Sampler { return idle{} },
		Configure: func(i int, cfg *agent.Config) {
			cfg.SampleInterval = 200 * time.Millisecond
			cfg.CoallocTimeout = testcluster.Stretch(6 * time.Second)
			cfg.Probes.InProcess = true
		},
	})
	c.WaitLeader(45 * time.Second)
	before := scrapeAgent(t, c, 0)
	if v := value(before, `shoal_jobs{state="done"}`); v > 0 {
		t.Fatalf("a fresh cluster reports %v done jobs", v)
	}
	ctx := context.Background()
	var res api.SubmitResponse
	testcluster.WaitFor(t, 30*time.Second, "the job submitted", func() bool {
		var err error
		res, err = c.Client(0).Submit(ctx, api.SubmitRequest{RequestID: "metrics-1", Owner: "root",
			Spec: api.JobSpec{Cmd: []string{"true"}, NP: 1, MPI: "none"}})
		return err == nil
	})
	testcluster.WaitFor(t, 60*time.Second, "the job done", func() bool {
		j, err := c.Client(0).Job(ctx, res.ID)
		return err == nil && j.State == "done"
	})
	var text string
	testcluster.WaitFor(t, 60*time.Second, "job, raft, memberlist and probe metrics on both agents, a link's on one", func() bool {
		links := false
		for i := range 2 {
			text = scrapeAgent(t, c, i)
			// The leader placed the job: its agent's placement histogram counts it.
			if i == c.Leader() && (value(text, "shoal_placement_seconds_count") != 1 || value(text, "shoal_placement_seconds_sum") <= 0) {
				return false
			}
			if value(text, `shoal_jobs{state="done"}`) != 1 || value(text, "shoal_job_queue_wait_seconds_count") != 1 ||
				value(text, "shoal_job_launch_seconds_count") != 1 || value(text, "shoal_queue_length") != 0 ||
				!strings.Contains(text, "\nshoal_raft_") || !strings.Contains(text, "\nshoal_memberlist_") ||
				value(text, "process_resident_memory_bytes") <= 0 ||
				// The other agent's state changes reach this one by broadcast, timed.
				value(text, "shoal_gossip_convergence_seconds_count") < 1 ||
				value(text, `shoal_probe_restarts_total{probe="nodestate"}`) != 0 ||
				value(text, `shoal_probe_last_beat_age_seconds{probe="nodestate"}`) < 0 {
				return false
			}
			peer := c.Name(1 - i)
			if value(text, `shoal_rtt_seconds{peer="`+peer+`"}`) > 0 && value(text, `shoal_bandwidth_bytes_per_second{peer="`+peer+`"}`) > 0 {
				links = true
			}
		}
		return links
	}, func() string { return "last exposition:\n" + text })

	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus, or make deps): cannot check the exposition")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, text)
	}
}
