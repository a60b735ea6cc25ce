package agent

import (
	"testing"

	"github.com/shoal-hpc/shoal/agent/httpapi"
)

// The log keeps each job's latest placement and forgets the jobs first
// recorded once it holds placementsKept.
func TestPlacementLog_LatestAndBounded(t *testing.T) {
	t.Parallel()
	l := newPlacementLog()
	l.record(httpapi.Placement{Job: 1, Attempt: 1})
	l.record(httpapi.Placement{Job: 1, Attempt: 2})
	if p, ok := l.get(1); !ok || p.Attempt != 2 {
		t.Fatalf("job 1: %+v %v, want its attempt 2", p, ok)
	}
	for j := uint64(2); j <= placementsKept+1; j++ {
		l.record(httpapi.Placement{Job: j, Attempt: 1})
	}
	if _, ok := l.get(1); ok {
		t.Fatal("job 1 kept past the bound: want the first recorded forgotten first")
	}
	if _, ok := l.get(placementsKept + 1); !ok || len(l.byJob) != placementsKept || len(l.order) != placementsKept {
		t.Fatalf("after %d jobs: %d kept, order %d: want %d", placementsKept+1, len(l.byJob), len(l.order), placementsKept)
	}
}
