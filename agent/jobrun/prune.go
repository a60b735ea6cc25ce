package jobrun

import "github.com/shoal-hpc/shoal/raftfsm"

// pruneBookkeeping drops the entries of the node's per-attempt and per-job maps whose attempt
// or job has ended in the replicated state: they matter only while it lives, and an agent that
// runs for months would otherwise keep one entry per job it ever saw. An attempt that has ended
// never lives again (attempt numbers only grow, and every entry is made after its attempt was
// seen in the state), so nothing dropped is ever needed again. Why a job waits is replicated
// state (set_wait_reason), not a map here. The Open MPI session directories have their own
// pruning (removeOMPIDirs); the agent's own maps are pruned by Deps.Prune, on the same cadence.
func (n *Node) pruneBookkeeping() {
	n.mu.Lock()
	launched, acking, signalled := keysOf(n.launched), keysOf(n.acking), keysOf(n.signalled)
	n.mu.Unlock()
	seen := n.procs.seenJobs()

	var endedAttempts []Key
	var endedJobs []uint64
	n.d.State.View(func(s *raftfsm.State) {
		for _, keys := range [][]Key{launched, acking, signalled} {
			for _, k := range keys {
				if AttemptEndedIn(s, k) {
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

	n.mu.Lock()
	for _, k := range endedAttempts {
		delete(n.launched, k)
		delete(n.acking, k)
		delete(n.signalled, k)
	}
	n.mu.Unlock()
	n.procs.forget(endedJobs)
	n.d.Prune()
}

// AttemptEndedIn reports whether attempt k is over in s: its job is gone, at a later attempt,
// or no longer live. Bookkeeping of such an attempt is never needed again.
func AttemptEndedIn(s *raftfsm.State, k Key) bool {
	j := s.Jobs[k.Job]
	return j == nil || j.Attempt != k.Attempt || !j.State.Live()
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

// BookkeepingSizes reports how many entries the node's per-job maps hold, by map; tests use
// it to check that they stay bounded by the live jobs.
func (n *Node) BookkeepingSizes() map[string]int {
	out := map[string]int{}
	n.mu.Lock()
	out["launched"], out["acking"], out["ompi_dirs"], out["signalled"] = len(n.launched), len(n.acking), len(n.ompiDirs), len(n.signalled)
	n.mu.Unlock()
	out["seen"] = len(n.procs.seenJobs())
	return out
}
