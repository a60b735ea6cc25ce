package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/leader"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// startJobGC starts this node's removal of purged jobs' logs. The
// leader's purge is one of the leader core's duties (leading.go). It runs
// even when retention is off, as a SIGHUP may turn it on; with retention
// off nothing is purged, so nothing is removed.
func (a *Agent) startJobGC() {
	every := leader.JobGCEvery
	if r := a.cfg.JobRetention; r > 0 {
		every = leader.GCEvery(r)
	}
	a.goLoop("job-gc", func(ctx context.Context) {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				a.removePurgedJobDirs()
			}
		}
	})
}

// removePurgedJobDirs deletes this node's log directories of jobs the
// cluster has forgotten: IDs below the next job ID that are no longer in
// the state. A job the state still holds keeps its logs.
func (a *Agent) removePurgedJobDirs() {
	root := filepath.Join(a.cfg.DataDir, "jobs")
	ents, err := os.ReadDir(root)
	if err != nil {
		return // no job ever ran here
	}
	var stale []string
	a.fsm.View(func(s *raftfsm.State) {
		for _, e := range ents {
			id, err := strconv.ParseUint(e.Name(), 10, 64)
			if err != nil || id >= s.NextJobID {
				continue
			}
			if _, ok := s.Jobs[id]; !ok {
				stale = append(stale, e.Name())
			}
		}
	})
	for _, name := range stale {
		if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
			a.log.Warn("remove logs of a purged job", "job", name, "err", err)
		}
	}
}
