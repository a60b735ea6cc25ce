package leader

import (
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// JobGCEvery is how often the leader looks for finished jobs to purge and
// each node for log directories of purged jobs. Purging is housekeeping:
// minutes late is fine, and the scan reads the whole job table.
const JobGCEvery = time.Minute

// GCEvery is JobGCEvery, or the retention when that is shorter (tests).
func GCEvery(retention time.Duration) time.Duration { return min(JobGCEvery, retention) }

// CollectJobs is the leader's job janitor: at most every GCEvery it
// proposes purge_jobs for the finished jobs that ended more than
// JobRetention ago (raftfsm.PurgeCandidates), so the replicated state,
// snapshots and `shoal jobs` do not grow forever; each purged job leaves
// a history record, and the records older than HistoryRetention go
// (purge_history). It proposes nothing when job retention is off (0).
func CollectJobs(v View, b GCBook) ([]Command, GCBook) {
	retention := v.Config.JobRetention
	if retention <= 0 || v.Now.Sub(b.LastCollect) < GCEvery(retention) {
		return nil, b
	}
	b.LastCollect = v.Now
	var cmds []Command
	if ids := raftfsm.PurgeCandidates(v.State, v.Now, retention); len(ids) > 0 {
		cmds = append(cmds, Command{Type: raftfsm.CmdPurgeJobs, Body: raftfsm.PurgeJobs{IDs: ids},
			After:  note("purged finished jobs", "jobs", len(ids), "retention", retention),
			Failed: note("purge of finished jobs not committed", "jobs", len(ids))})
	}
	if hr := v.Config.HistoryRetention; hr > 0 && raftfsm.HistoryExpired(v.State, v.Now.Add(-hr)) {
		cmds = append(cmds, Command{Type: raftfsm.CmdPurgeHistory, Body: raftfsm.PurgeHistory{Before: v.Now.Add(-hr)},
			After:  note("purged old history records", "retention", hr),
			Failed: note("purge of history records not committed")})
	}
	return cmds, b
}
