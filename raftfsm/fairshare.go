package raftfsm

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// DefaultHalfLife is the half-life of recorded usage in the fair-share factor: core-seconds used
// an hour ago count half as much as those used now (Slurm's PriorityDecayHalfLife is 7 days on
// a production cluster; a lab's queue turns over in hours).
const DefaultHalfLife = time.Hour

// RecentUsage returns each owner's recent usage: the core-seconds of every attempt that ran (from its
// start to its end, or to now while it runs; a process of --cpus-per-rank N holds N cores), each
// second weighted by 2^(-age/halfLife). A pure
// function of the state and the time, so every node computes the same.
func RecentUsage(s *State, now time.Time, halfLife time.Duration) map[string]float64 {
	if halfLife <= 0 {
		halfLife = DefaultHalfLife
	}
	h := halfLife.Seconds()
	out := map[string]float64{}
	for _, j := range s.Jobs {
		for i := range j.Attempts {
			a := &j.Attempts[i]
			if a.StartedAt.IsZero() {
				continue
			}
			end := a.EndedAt
			if end.IsZero() || end.After(now) {
				end = now
			}
			if !end.After(a.StartedAt) {
				continue
			}
			// ∫ cores·2^(-(now-t)/h) dt over [start, end], in closed form.
			ageEnd, ageStart := now.Sub(end).Seconds(), now.Sub(a.StartedAt).Seconds()
			cores := float64(a.NP() * j.Spec.CPUs())
			u := cores * h / math.Ln2 * (math.Exp2(-ageEnd/h) - math.Exp2(-ageStart/h))
			if u > 0 {
				out[j.Owner] += u
			}
		}
	}
	return out
}

// FairShare returns each owner's fair-share factor in (0,1] from their usage: 2^(-U/S), Slurm's
// classic formula with equal shares, U an owner's share of the total usage and S = 1/n for the
// n owners that have used the cluster or have jobs queued. An owner who used nothing gets 1;
// one who used exactly an equal share gets 1/2; the factor halves for every further share.
func FairShare(s *State, usage map[string]float64) map[string]float64 {
	owners := map[string]bool{}
	total := 0.0
	for o, u := range usage {
		owners[o] = true
		total += u
	}
	for _, j := range s.Jobs {
		if j.State == StateQueued {
			owners[j.Owner] = true
		}
	}
	out := make(map[string]float64, len(owners))
	for o := range owners {
		out[o] = 1
		if total > 0 {
			out[o] = math.Exp2(-usage[o] / total * float64(len(owners)))
		}
	}
	return out
}

// EffectivePriority is the key the queue is ordered by: the job's priority plus its owner's
// fair-share factor, so the factor only orders jobs of equal priority.
func EffectivePriority(j *Job, share map[string]float64) float64 {
	f, ok := share[j.Owner]
	if !ok {
		f = 1
	}
	return float64(j.Spec.Priority) + f
}

// FairQueue returns the queued jobs in the order the leader places them: higher priority first;
// among equal priorities, the owner with the higher fair-share factor (the less recent usage)
// first; then first come, first served. The jobs are the state's own; do not modify them.
func FairQueue(s *State, now time.Time, halfLife time.Duration) []*Job {
	share := FairShare(s, RecentUsage(s, now, halfLife))
	q := Queue(s)
	slices.SortStableFunc(q, func(a, b *Job) int {
		if c := cmp.Compare(b.Spec.Priority, a.Spec.Priority); c != 0 {
			return c
		}
		return cmp.Compare(share[b.Owner], share[a.Owner])
	})
	return q
}
