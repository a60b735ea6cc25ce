package metrics_test

import (
	"bytes"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/metrics"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Real raft and memberlist, in two in-process agents, report into the
// Prometheus sink instead of go-metrics' blackhole, and promtool accepts
// what they report.
func TestRaftAndMemberlistMetricsLand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a two-node cluster")
	}
	if err := metrics.InstallGoMetrics(); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Sources{})
	if err := m.AddGoMetrics(); err != nil {
		t.Fatal(err)
	}
	c := testcluster.New(t, 2, testcluster.Options{})
	c.WaitLeader(45 * time.Second)
	var names []string
	testcluster.WaitFor(t, 30*time.Second, "raft's and memberlist's metrics in the registry", func() bool {
		fams, err := m.Registry().Gather()
		if err != nil {
			return false
		}
		names = names[:0]
		raft, ml := false, false
		for _, f := range fams {
			names = append(names, f.GetName())
			raft = raft || strings.HasPrefix(f.GetName(), "shoal_raft_")
			ml = ml || strings.HasPrefix(f.GetName(), "shoal_memberlist_")
		}
		return raft && ml
	}, func() string { return "families: " + strings.Join(names, " ") })

	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (apt-get install prometheus, or make deps): cannot check raft's and memberlist's names")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/metrics", nil))
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(rec.Body.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, rec.Body)
	}
}
