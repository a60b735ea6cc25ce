package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

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
	dir, fsm, log := a.cfg.DataDir, a.fsm, a.log
	a.loops.every("job-gc", every, func() { removePurgedJobDirs(dir, fsm, log) })
}

// removePurgedJobDirs deletes this node's log directories of jobs the
// cluster has forgotten: IDs below the next job ID that are no longer in
// the state. A job the state still holds keeps its logs.
func removePurgedJobDirs(dataDir string, fsm *raftfsm.FSM, log *slog.Logger) {
	root := filepath.Join(dataDir, "jobs")
	ents, err := os.ReadDir(root)
	if err != nil {
		return // no job ever ran here
	}
	var stale []string
	fsm.View(func(s *raftfsm.State) {
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
			log.Warn("remove logs of a purged job", "job", name, "err", err)
		}
	}
}
