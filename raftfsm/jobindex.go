package raftfsm

// jobIndex is what keepFinished needs of the whole state without reading
// every job: each owner's finished jobs, and how many unfinished jobs
// depend on others. Without it every task's end scanned all jobs, queued
// ones included: 1.7 ms a task at 10,000 queued, linear in the queue.
//
// It is derived, never serialised: nil until first needed (and after a
// restore or a copy, which drop it), then built from Jobs and kept equal
// to a rebuild by every write of a job (setJob, deleteJob). Replicas that
// built theirs at different indexes hold the same one, so they prune the
// same.
type jobIndex struct {
	finished  map[string]map[uint64]struct{}
	depending int // unfinished jobs with dependencies
}

// index returns the state's job index, building it on first use.
func (s *State) index() *jobIndex {
	if s.jobs == nil {
		x := &jobIndex{finished: map[string]map[uint64]struct{}{}}
		for _, j := range s.Jobs {
			x.add(j)
		}
		s.jobs = x
	}
	return s.jobs
}

// setJob puts j in the state in place of the job of its ID, if any.
func (s *State) setJob(j *Job) {
	if s.jobs != nil {
		s.jobs.remove(s.Jobs[j.ID])
		s.jobs.add(j)
	}
	s.Jobs[j.ID] = j
}

// deleteJob removes the job id from the state.
func (s *State) deleteJob(id uint64) {
	if s.jobs != nil {
		s.jobs.remove(s.Jobs[id])
	}
	delete(s.Jobs, id)
}

func (x *jobIndex) add(j *Job) {
	switch {
	case j == nil:
	case j.State.finished():
		m := x.finished[j.Owner]
		if m == nil {
			m = map[uint64]struct{}{}
			x.finished[j.Owner] = m
		}
		m[j.ID] = struct{}{}
	case len(j.Spec.Depend) > 0:
		x.depending++
	}
}

func (x *jobIndex) remove(j *Job) {
	switch {
	case j == nil:
	case j.State.finished():
		delete(x.finished[j.Owner], j.ID)
		if len(x.finished[j.Owner]) == 0 {
			delete(x.finished, j.Owner)
		}
	case len(j.Spec.Depend) > 0:
		x.depending--
	}
}
