package raftfsm

import (
	"cmp"
	"maps"
	"slices"
)

// Finished jobs are kept for the retention (24 h by default) so that their owner sees how they
// ended, but the limits on queued jobs and processes count unfinished jobs only: one user who
// submitted and killed jobs in a loop made 1,000 finished jobs in 1.2 s, and grew the snapshot
// from 0.12 MB to 60 MB and the agent serving `shoal jobs` by 285 MB. Limits.FinishedJobs bounds
// them per owner the way Slurm's MinJobAge lets completed jobs leave the controller's memory:
// the oldest go first, leaving their history record (`shoal history`, as sacct), and submits are
// never refused for them. Pruning happens in the command that makes a job finish or adds one,
// so the bound holds at every index, not only after the leader's next purge round.

// finishing lists the commands after which an owner may hold more finished jobs than before:
// the ones that end jobs, and submit_job, which prunes before its jobs can end.
var finishing = []string{CmdSubmitJob, CmdFinishAttempt, CmdFailAttempt, CmdRejectJob, CmdKillJob,
	CmdRecordUsage, CmdRemoveNode, CmdNodeRestarted}

// keepFinished prunes, for the owners of the jobs res names, the oldest finished jobs beyond
// Limits.FinishedJobs: oldest by end, then by ID. A finished job that an unfinished one depends
// on counts but stays. It is a pure function of the state, so every node prunes the same.
//
// It reads the owners' finished jobs from the job index, not every job: an array's task
// ends in time independent of how many tasks are queued behind it. Only when unfinished jobs
// have dependencies does it read every job, to keep the ones they depend on.
func (s *State) keepFinished(res Result) {
	limit := s.Limits.FinishedJobs
	if limit == 0 {
		return
	}
	idx := s.index()
	finished := map[string][]*Job{}
	for _, id := range append([]uint64{res.JobID}, res.JobIDs...) {
		j := s.Jobs[id]
		if j == nil || finished[j.Owner] != nil || len(idx.finished[j.Owner]) <= limit {
			continue
		}
		js := make([]*Job, 0, len(idx.finished[j.Owner]))
		for fid := range idx.finished[j.Owner] {
			js = append(js, s.Jobs[fid])
		}
		finished[j.Owner] = js
	}
	needed := func(*Job) bool { return false }
	if idx.depending > 0 {
		needed = nil
	}
	var recs []HistoryRecord
	for _, owner := range slices.Sorted(maps.Keys(finished)) {
		js := finished[owner]
		excess := len(js) - limit
		if needed == nil {
			needed = dependedOn(s)
		}
		slices.SortFunc(js, func(a, b *Job) int {
			return cmp.Or(a.EndedAt.Compare(b.EndedAt), cmp.Compare(a.ID, b.ID))
		})
		for _, j := range js {
			if excess == 0 {
				break
			}
			if needed(j) {
				continue
			}
			s.deleteJob(j.ID)
			if s.byRequest[j.RequestID] == j.ID {
				delete(s.byRequest, j.RequestID)
			}
			recs = append(recs, Record(j))
			excess--
		}
	}
	if len(recs) > 0 {
		slices.SortFunc(recs, func(a, b HistoryRecord) int { return cmp.Compare(a.ID, b.ID) })
		s.History = addHistory(s.History, recs)
	}
}
