package raftfsm

import (
	"cmp"
	"slices"
)

// HeldSlots returns, per node, the cores that launching and running jobs hold there (a process
// of --cpus-per-rank N holds N): the slots placement must subtract from a node's free capacity.
// Reservations count from the moment an allocation is committed, so two jobs never co-allocate
// the same free slots.
func HeldSlots(s *State) map[string]int {
	held := map[string]int{}
	for _, j := range s.Jobs {
		a := j.Current()
		if !j.State.Live() || a == nil {
			continue
		}
		for _, h := range a.Hosts {
			held[h.Node] += h.NP * j.Spec.CPUs()
		}
	}
	return held
}

// LiveJobs returns deep copies of the live jobs (launching, running), by
// ID: what a node's reconciler acts on, without copying the whole state
// (at 100,000 queued tasks a deep copy takes a second, and a reconciler
// reads the state at every applied entry).
func LiveJobs(s *State) []*Job {
	var out []*Job
	for _, j := range s.Jobs {
		if j.State.Live() && j.Current() != nil {
			out = append(out, j.clone())
		}
	}
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Queue returns the queued jobs in the order they should be placed: higher priority first, then
// first come, first served (Seq), then ID. The jobs are the state's own; do not modify them.
func Queue(s *State) []*Job {
	var q []*Job
	for _, j := range s.Jobs {
		if j.State == StateQueued {
			q = append(q, j)
		}
	}
	slices.SortFunc(q, compareJobs)
	return q
}

// JobsOn returns the IDs, sorted, of the live jobs whose current attempt holds node: the jobs a
// node's reconciler must run or keep running.
func JobsOn(s *State, node string) []uint64 {
	var ids []uint64
	for id, j := range s.Jobs {
		if a := j.Current(); j.State.Live() && a != nil && a.Holds(node) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// JobQuery selects a page of jobs (GET /v1/jobs): those of Owner (any when empty) in one of
// States (any when empty) with an ID above After, at most Limit of them (all when 0), by ID.
type JobQuery struct {
	Owner  string
	States []JobState
	After  uint64
	Limit  int
}

// ListJobs returns the page q selects, as copies safe to keep, and whether more jobs match after
// it. Pages are ordered by job ID, which never changes and is never reused, so following After
// from page to page misses and repeats nothing while jobs come and go.
func ListJobs(s *State, q JobQuery) (page []*Job, more bool) {
	var ids []uint64
	for id, j := range s.Jobs {
		if id > q.After && (q.Owner == "" || j.Owner == q.Owner) && (len(q.States) == 0 || slices.Contains(q.States, j.State)) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if q.Limit > 0 && len(ids) > q.Limit {
		ids, more = ids[:q.Limit], true
	}
	page = make([]*Job, len(ids))
	for i, id := range ids {
		page[i] = s.Jobs[id].clone()
	}
	return page, more
}
