package agent

import (
	"sync"

	"github.com/shoal-hpc/shoal/agent/httpapi"
)

// placementsKept bounds the decisions a leader remembers: the latest
// attempt of this many jobs, the oldest forgotten first.
const placementsKept = 4096

// placementLog is what this agent, while it led, decided about each job's
// latest placement: the groups placement compared and their terms. It lives
// in memory only: raft holds the decision, not its reasons, so a new leader
// explains the placements it makes, not its predecessor's.
type placementLog struct {
	mu    sync.Mutex
	byJob map[uint64]httpapi.Placement
	order []uint64 // jobs in the order first recorded
}

func newPlacementLog() *placementLog {
	return &placementLog{byJob: map[uint64]httpapi.Placement{}}
}

// record keeps p as its job's latest placement.
func (l *placementLog) record(p httpapi.Placement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.byJob[p.Job]; !ok {
		l.order = append(l.order, p.Job)
		if len(l.order) > placementsKept {
			delete(l.byJob, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.byJob[p.Job] = p
}

// get returns job's latest recorded placement.
func (l *placementLog) get(job uint64) (httpapi.Placement, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, ok := l.byJob[job]
	return p, ok
}
