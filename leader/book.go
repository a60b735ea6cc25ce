package leader

import (
	"maps"
	"time"

	"github.com/shoal-hpc/shoal/probeplan"
)

// Book is the leader's own memory between rounds, the part of its state
// raft does not hold: a value, passed in and returned, never kept by the
// core. Each part belongs to one of the agent's leader loops (jobs,
// probes, job GC), so loops that run apart never share one. The zero Book
// is a new leader's.
type Book struct {
	Jobs   JobsBook
	Probes ProbesBook
	GC     GCBook
}

// JobsBook is the job scheduler's memory: outcomes of its last proposals
// that the next round acts on.
type JobsBook struct {
	// Refused holds, per job, a placement raft refused for its content
	// (the allocation breaks raft's bounds): the next round rejects the
	// job with the reason rather than proposing the same placement again.
	Refused map[uint64]Refusal
}

// Refusal is a placement raft refused.
type Refusal struct {
	// Attempt is the attempt the refused placement would have made.
	Attempt int
	// Code and Err are raft's refusal (raftfsm.Code, the error text).
	Code, Err string
}

// PlacementRefused records raft's refusal of a placement proposed for
// job's attempt, so that the next round can act on it. Only refusals
// raft would repeat every round are kept: any other (the job changed
// under the round) is retried by the next round anyway.
func (b JobsBook) PlacementRefused(job uint64, attempt int, code, err string) JobsBook {
	if !deterministicRefusal(code) {
		return b
	}
	next := JobsBook{Refused: maps.Clone(b.Refused)}
	if next.Refused == nil {
		next.Refused = map[uint64]Refusal{}
	}
	next.Refused[job] = Refusal{Attempt: attempt, Code: code, Err: err}
	return next
}

// ProbesBook is the probe reconciler's memory.
type ProbesBook struct {
	// Supervisor is when each probe's heartbeat last changed and how many
	// relaunches in a row each probe has had.
	Supervisor probeplan.Supervisor
	// CycleStart is when the full bandwidth cycle the recorded cycle
	// belongs to started (a catch-up cycle keeps its full cycle's start).
	CycleStart map[uint64]time.Time
	// Tries counts the tests of each pair since the last full cycle
	// (catch-up retries a failed test once).
	Tries map[probeplan.Pair]int
	// Counted is the last cycle whose tests Tries holds.
	Counted uint64
	// SwitchesAt is the newest bandwidth test (Unix ms) the last switch
	// inference saw (recordSwitches).
	SwitchesAt int64
	// Planned holds, per member, the last cycle whose plan included it:
	// the members when this leader planned a cycle, and the nodes
	// extendCycle added to one under way. A member missing from the cycle
	// under way joined after it was planned.
	Planned map[string]uint64
	// CatchUpEmpty keys (cycle, unmeasured nodes, pairs to test again)
	// the last catch-up that found nothing to test, so it is not planned
	// again every round; extendCycle keeps its own empty answer here too,
	// under keys that begin "mid ".
	CatchUpEmpty string
	// Retested holds, per pair tested again because its test ran beside
	// traffic (in the cycle under way, or by a catch-up), that test's time
	// (Unix ms): until a newer test shows in the rows, the same reading
	// does not order another (a row reaches the leader a little after its
	// round ends). A pair it holds is not tested again within the cycle
	// under way; the catch-up may (RetestTries).
	Retested map[probeplan.Pair]int64
	// LinkBooked holds, per node whose link checks said its link changed,
	// the latest such change (Node.Link.Since, Unix ms) the leader saw
	// (linkRetests). It outlives the verdict: the node's pairs still
	// untested since the change are booked again between cycles.
	LinkBooked map[string]int64
	// LinkTries holds, per pair booked because a node's link changed,
	// the tries of its latest change: at most probeplan.RetestTries, each
	// a round after the one before has ended.
	LinkTries map[probeplan.Pair]LinkTry
}

// LinkTry is a pair's tests booked because a node's link changed.
type LinkTry struct {
	// Change is the change they are for (Unix ms): the later of the
	// pair's ends' changes. A later change counts its tries afresh.
	Change int64
	// Tries counts the tests booked for the change.
	Tries int
	// Next is when the pair may be booked again (Unix ms): a round after
	// the end of the round that holds its latest test, so that the test's
	// row has reached the leader and a peer busy as that round began has
	// had a round to finish.
	Next int64
}

// retested books, in a copy of Retested, each pair of planned that testAt
// holds (a re-test of a reading taken beside traffic) at that reading's
// time (Unix ms).
func (b ProbesBook) retested(planned []probeplan.Pair, testAt map[probeplan.Pair]int64) ProbesBook {
	next := maps.Clone(b.Retested)
	for _, q := range planned {
		if at, ok := testAt[q]; ok {
			if next == nil {
				next = map[probeplan.Pair]int64{}
			}
			next[q] = at
		}
	}
	b.Retested = next
	return b
}

// CycleStart is the bookkeeping of a bandwidth cycle the leader planned,
// recorded once raft took it.
type CycleStart struct {
	Cycle uint64
	// Start is the start of the full cycle it belongs to.
	Start time.Time
	// Full: a full cycle starts counting tests over.
	Full bool
}

// CycleCommitted records in the book a cycle raft took.
func (b ProbesBook) CycleCommitted(c CycleStart) ProbesBook {
	b.CycleStart = map[uint64]time.Time{c.Cycle: c.Start}
	if c.Full {
		b.Tries, b.Counted = map[probeplan.Pair]int{}, 0 // counted when the cycle has run
		b.Retested = nil
	}
	return b
}

// GCBook is the job janitor's memory.
type GCBook struct {
	// LastCollect is when the janitor last looked for jobs to purge.
	LastCollect time.Time
}
