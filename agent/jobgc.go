package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// jobGCEvery is how often the leader looks for finished jobs to purge and
// each node for log directories of purged jobs. Purging is housekeeping:
// minutes late is fine, and the scan reads the whole job table.
const jobGCEvery = time.Minute

// jobGC is when the leader's janitor last ran (used by the leader hook's
// goroutine only).
type jobGC struct {
	lastCollect time.Time
}

// startJobGC registers the leader's purge and starts this node's removal
// of purged jobs' logs.
func (a *Agent) startJobGC() {
	if a.cfg.JobRetention <= 0 {
		return
	}
	a.leaderHooks = append(a.leaderHooks, a.collectJobs)
	a.goLoop("job-gc", func(ctx context.Context) {
		tick := time.NewTicker(a.gcEvery())
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

// collectJobs is the leader's job janitor: it proposes purge_jobs for the
// finished jobs that ended more than JobRetention ago (raftfsm.PurgeCandidates),
// so the replicated state, snapshots and `shoal jobs` do not grow forever.
func (a *Agent) collectJobs(ctx context.Context) {
	now := time.Now()
	if now.Sub(a.jobGC.lastCollect) < a.gcEvery() {
		return
	}
	a.jobGC.lastCollect = now
	var ids []uint64
	a.fsm.View(func(s *raftfsm.State) { ids = raftfsm.PurgeCandidates(s, now, a.cfg.JobRetention) })
	if len(ids) == 0 {
		return
	}
	cmd, err := raftfsm.Encode(raftfsm.CmdPurgeJobs, now, raftfsm.PurgeJobs{IDs: ids})
	if err != nil {
		a.log.Error("encode purge_jobs", "err", err)
		return
	}
	res, err := a.Apply(ctx, cmd)
	if err != nil || res.Err != "" {
		a.log.Warn("purge of finished jobs not committed", "jobs", len(ids), "err", err, "refused", res.Err)
		return
	}
	a.log.Info("purged finished jobs", "jobs", len(ids), "retention", a.cfg.JobRetention)
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

// gcEvery is jobGCEvery, or the retention when that is shorter (tests).
func (a *Agent) gcEvery() time.Duration { return min(jobGCEvery, a.cfg.JobRetention) }
