package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-hpc/shoal/agent/api"
	"github.com/shoal-hpc/shoal/testcluster"
)

// The job loop prunes its bookkeeping as jobs end: after a batch of real jobs has finished on
// a one-node cluster, every per-job map of the agent is empty again. (The bound over thousands
// of jobs is TestPruneKeepsJobMapsBoundedByLiveJobs, which drives the pruning directly.)
func TestJobBookkeepingEmptiesWhenJobsEnd(t *testing.T) {
	t.Parallel()
	c := jobCluster(t, 1, nil)
	var ids []uint64
	for range 10 {
		ids = append(ids, submitAPI(t, c, 0, api.JobSpec{Cmd: []string{"true"}, NP: 1}))
	}
	for _, id := range ids {
		waitState(t, c, 0, id, 60*time.Second, "done")
	}
	var sizes map[string]int
	testcluster.WaitFor(t, 20*time.Second, "every per-job map empty", func() bool {
		sizes = c.Agent(0).BookkeepingSizes()
		for _, n := range sizes {
			if n != 0 {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprint(sizes) })
}
