package agent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Lasting history: a finished job purged by job GC leaves a
// record that `shoal history` lists on any node, like sacct.
func TestHistoryOutlivesJobGC(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 2, func(_ int, cfg *agent.Config) { cfg.JobRetention = 2 * time.Second })
	id := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true", "history-marker"}, NP: 2})
	j := waitState(t, c, 0, id, 30*time.Second, "done")

	// Reads are local (stale by design): wait until both nodes have applied
	// the purge, so the checks below see the same state on node 0.
	var rec api.HistoryRecord
	for _, node := range []int{1, 0} {
		testcluster.WaitFor(t, 30*time.Second, fmt.Sprintf("job %d purged, its record in shoal history on node %d", id, node), func() bool {
			out, _, code := shoalCLI(t, c, node, "history", "--json")
			var hs []api.HistoryRecord
			if code != 0 || json.Unmarshal([]byte(out), &hs) != nil {
				return false
			}
			for _, h := range hs {
				if h.ID == id && h.Purged {
					rec = h
					return true
				}
			}
			return false
		})
	}
	if _, errOut, code := shoalCLI(t, c, 0, "job", fmt.Sprint(id)); code == 0 {
		t.Errorf("shoal job %d after the purge: exit 0, want the job gone (%s)", id, errOut)
	}
	if rec.Owner != j.Owner || strings.Join(rec.Cmd, " ") != "true history-marker" || rec.State != "done" || rec.ExitCode == nil ||
		*rec.ExitCode != 0 || rec.NP != 2 || len(rec.Nodes) == 0 || rec.StartedAt == nil || !rec.EndedAt.Equal(*j.EndedAt) ||
		!rec.SubmittedAt.Equal(j.SubmittedAt) || rec.Attempts != 1 || (rec.Usage != nil && rec.Usage.MaxRSSBytes == 0) {
		t.Errorf("history record %+v of job %+v", rec, j)
	}
	out, _, code := shoalCLI(t, c, 0, "history")
	if code != 0 || !strings.Contains(out, "history-marker") || !strings.Contains(out, "yes") {
		t.Errorf("shoal history: exit %d\n%s", code, out)
	}
	out, _, code = shoalCLI(t, c, 0, "history", "--user", "nosuchuser", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("shoal history --user nosuchuser: exit %d\n%s", code, out)
	}
}
