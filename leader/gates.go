package leader

import (
	"fmt"
	"time"

	"github.com/shoal-hpc/shoal/raftfsm"
)

// gates is what keeps a queued job out of placement before any slot is
// counted: a hold, a begin time, a dependency, its array's limit
// of tasks at once. It is built once per round from raft's state.
type gates struct {
	st    *raftfsm.State
	now   time.Time
	tasks map[uint64][]*raftfsm.Job
	// live counts, per array, the tasks that hold slots, including the
	// ones this round places.
	live map[uint64]int
}

func newGates(st *raftfsm.State, now time.Time) *gates {
	return &gates{st: st, now: now, tasks: raftfsm.ArrayTasks(st), live: raftfsm.LiveTasks(st)}
}

// gate is what a gate decides about one queued job.
type gate struct {
	// wait, when set, is the reason the job waits this round.
	wait string
	// never, when set, is the reason the job fails: it can never run.
	never string
}

// check returns the first gate that stops j, in Slurm's reason words, or
// the zero gate when j may be placed.
func (g *gates) check(j *raftfsm.Job) gate {
	if j.Held {
		return gate{wait: fmt.Sprintf("JobHeldUser: held; 'shoal release %d' lets it run", j.ID)}
	}
	switch o, why := raftfsm.CheckDepend(g.st, j, g.tasks); o {
	case raftfsm.DependNever:
		return gate{never: why}
	case raftfsm.DependWait:
		return gate{wait: why}
	}
	if b := j.Spec.Begin; !b.IsZero() && g.now.Before(b) {
		return gate{wait: "BeginTime: not before " + b.UTC().Format(time.RFC3339)}
	}
	if j.InArray() && j.ArrayLimit > 0 && g.live[j.ArrayJobID] >= j.ArrayLimit {
		return gate{wait: fmt.Sprintf("JobArrayTaskLimit: %d of array %d's tasks at once", j.ArrayLimit, j.ArrayJobID)}
	}
	return gate{}
}

// placed counts a task this round places against its array's limit.
func (g *gates) placed(j *raftfsm.Job) {
	if j.InArray() {
		g.live[j.ArrayJobID]++
	}
}
