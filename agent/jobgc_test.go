package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent"
	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// Finished jobs leave the state, on every node, and their logs leave the
// disks after JobRetention; a job still running stays.
func TestJobGC_PurgesFinishedJobsOnly(t *testing.T) {
	t.Parallel()
	const retention = 2 * time.Second
	c := jobCluster(t, 3, func(_ int, cfg *agent.Config) { cfg.JobRetention = retention })
	done := submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 2, PPN: 1})
	running := submitAPI(t, c, 1, api.JobSpec{Cmd: []string{"sleep", "300"}, NP: 1})
	j := waitState(t, c, 0, done, 30*time.Second, "done")
	var dirs []string // where the job left logs (its head node at least)
	for _, h := range j.Hosts {
		dir := filepath.Join(c.DataDir(c.Index(h.Node)), "jobs", strconv.FormatUint(done, 10))
		if _, err := os.Stat(dir); err == nil {
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("job %d left no log directory on %v", done, j.Hosts)
	}
	waitState(t, c, 1, running, 30*time.Second, "running")
	testcluster.WaitFor(t, 30*time.Second, "the finished job purged on every node", func() bool {
		for i := range c.N() {
			js, err := c.Client(i).Jobs(context.Background())
			if err != nil {
				return false
			}
			for _, x := range js {
				if x.ID == done {
					return false
				}
			}
		}
		return true
	})
	testcluster.WaitFor(t, 30*time.Second, "its log directories removed", func() bool {
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				return false
			}
		}
		return true
	})
	if got := jobState(c, 2, running); got.State != "running" {
		t.Fatalf("running job %d is %q after the purge, want running", running, got.State)
	}
	if _, err := c.Client(0).Job(context.Background(), done); err == nil {
		t.Fatalf("job %d still answers after the purge", done)
	}
}
