package agent

import "github.com/shoal-hpc/shoal/raftfsm"

// pruneJobBookkeeping drops the entries of the agent's per-attempt and per-job maps whose
// attempt or job has ended in the replicated state: they matter only while it lives, and an
// agent that runs for months would otherwise keep one entry per job it ever saw. An attempt
// that has ended never lives again (attempt numbers only grow, and every entry is made after
// its attempt was seen in the state), so nothing dropped is ever needed again. Why a job waits
// is replicated state (set_wait_reason), not a map here. The Open MPI
// session directories have their own pruning (removeOMPIDirs).
func (a *Agent) pruneJobBookkeeping() {
	a.jobs.mu.Lock()
	launched, acking := keysOf(a.jobs.launched), keysOf(a.jobs.acking)
	a.jobs.mu.Unlock()
	a.jobs.el.mu.Lock()
	reported, signalled := keysOf(a.jobs.el.reported), keysOf(a.jobs.el.signalled)
	a.jobs.el.mu.Unlock()
	seen := a.procs.seenJobs()

	var endedAttempts []jobKey
	var endedJobs []uint64
	a.fsm.View(func(s *raftfsm.State) {
		attemptEnded := func(k jobKey) bool {
			j := s.Jobs[k.Job]
			return j == nil || j.Attempt != k.Attempt || !j.State.Live()
		}
		for _, keys := range [][]jobKey{launched, acking, reported, signalled} {
			for _, k := range keys {
				if attemptEnded(k) {
					endedAttempts = append(endedAttempts, k)
				}
			}
		}
		for _, id := range seen {
			// The fence of a job outlives its attempts while the job may be placed again.
			if j := s.Jobs[id]; j == nil || j.State.Terminal() {
				endedJobs = append(endedJobs, id)
			}
		}
	})

	a.jobs.mu.Lock()
	for _, k := range endedAttempts {
		delete(a.jobs.launched, k)
		delete(a.jobs.acking, k)
	}
	a.jobs.mu.Unlock()
	a.jobs.el.mu.Lock()
	for _, k := range endedAttempts {
		delete(a.jobs.el.reported, k)
		delete(a.jobs.el.signalled, k)
	}
	a.jobs.el.mu.Unlock()
	a.procs.forget(endedJobs)
}

func keysOf[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// seenJobs lists the jobs the fence remembers.
func (t *procTable) seenJobs() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return keysOf(t.seen)
}

// forget drops the fences of jobs that have ended.
func (t *procTable) forget(jobs []uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range jobs {
		delete(t.seen, id)
	}
}

// BookkeepingSizes reports how many entries the agent's per-job maps hold, by map; tests use
// it to check that they stay bounded by the live jobs.
func (a *Agent) BookkeepingSizes() map[string]int {
	out := map[string]int{}
	a.jobs.mu.Lock()
	out["launched"], out["acking"], out["ompi_dirs"] = len(a.jobs.launched), len(a.jobs.acking), len(a.jobs.ompiDirs)
	a.jobs.mu.Unlock()
	a.jobs.el.mu.Lock()
	out["reported"], out["signalled"] = len(a.jobs.el.reported), len(a.jobs.el.signalled)
	a.jobs.el.mu.Unlock()
	out["seen"] = len(a.procs.seenJobs())
	return out
}
