package agent_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// TestCPUsPerRankCountAgainstTheUserLimit: a local user (uid 65534) under a limit of 4 CPUs asks
// for one rank of 4 CPUs, then for one more rank. The second is refused with 429 naming the
// limit: a rank of --cpus-per-rank 4 is 4 cores, not one process's worth.
func TestCPUsPerRankCountAgainstTheUserLimit(t *testing.T) {
	t.Parallel()
	needNobody(t)
	binDir := t.TempDir()
	if err := os.Chmod(filepath.Dir(binDir), 0o755); err != nil {
		t.Fatal(err)
	}
	const limit = 4
	c := jobCluster(t, 1, func(_ int, cfg *agent.Config) { cfg.Limits.Procs = limit })
	testcluster.WaitFor(t, 15*time.Second, "the leader to replicate the limits", func() bool {
		return replicatedLimits(t, c, 0).Procs == limit
	})
	bin := copyExecutable(t, binDir)
	sock := c.Agent(0).SocketPath()
	submit := func(marker string, cpus int) sockAns {
		b, _ := json.Marshal(api.SubmitRequest{RequestID: marker, Spec: api.JobSpec{
			Cmd: []string{"true", marker}, NP: 1, CPUsPerRank: cpus, MPI: "none", Workdir: "/", Oversubscribe: true,
			PEs: []api.PENeed{{Kind: "gpu", PerProc: 1}}}}) // stays queued: no node has a GPU
		return asUser(t, bin, sock, 65534, sockReq{Method: "POST", Path: "/v1/jobs", Body: b})
	}
	if ans := submit("wide", limit); ans.Code != http.StatusOK {
		t.Fatalf("one rank of %d CPUs under a limit of %d: %d %s", limit, limit, ans.Code, ans.Msg)
	}
	ans := submit("one-more", 0)
	if ans.Code != http.StatusTooManyRequests || !strings.Contains(ans.Msg, "--max-user-procs") || !strings.Contains(ans.Msg, "4 CPUs") {
		t.Fatalf("one more rank after a rank of %d CPUs, limit %d: %d %q, want 429 naming the CPUs and --max-user-procs", limit, limit, ans.Code, ans.Msg)
	}
}
