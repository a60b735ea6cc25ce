package leader

import "github.com/shoal-hpc/shoal/raftfsm"

// Answer is raft's answer to one command it committed: the FSM took it
// (Err empty) or refused it (Err its text, Code raftfsm.Code's).
type Answer struct {
	Code, Err string
}

// Taken reports whether the FSM took the command.
func (a Answer) Taken() bool { return a.Err == "" }

// Answered folds raft's answer to a command of the core into the Book:
// a placement the FSM refused is remembered for the next round
// (JobsBook.PlacementRefused), a cycle it took is recorded
// (ProbesBook.CycleCommitted). Any other answer leaves the Book as it
// was. Each answer touches only the part of the Book of the duty that
// decided the command, so a loop that runs one duty may fold into the
// whole Book.
func (b Book) Answered(c Command, a Answer) Book {
	if p, ok := c.Body.(raftfsm.PlaceJob); ok && !a.Taken() {
		b.Jobs = b.Jobs.PlacementRefused(p.ID, p.Attempt, a.Code, a.Err)
	}
	if c.Cycle != nil && a.Taken() {
		b.Probes = b.Probes.CycleCommitted(*c.Cycle)
	}
	return b
}

// Proposer commits the core's commands: raft on the agent, the FSM
// itself in the core's tests.
type Proposer interface {
	// Propose commits c and returns the FSM's answer. An error is the
	// proposal's own (no leader, a timeout): raft may or may not have
	// committed c, so there is no answer to fold, and the next round
	// decides again from what raft holds.
	Propose(c Command) (Answer, error)
	// Answered hears the answer to every command Propose returned one
	// for, in order; it folds it into the Book (Book.Answered) and may
	// do more of its own (a metric, a log line).
	Answered(c Command, a Answer)
	// Skipped hears a placement command left out of the round.
	Skipped(c Command)
}

// BatchProposer is a Proposer that also commits many commands in one
// raft entry (raftfsm.Batch).
type BatchProposer interface {
	Proposer
	// ProposeBatch commits cs, in order, as one entry, and returns the
	// answers to the commands the FSM applied: all of them, or with
	// stopAtRefusal those up to and including the first it refused. An
	// error is the proposal's own, for all of them.
	ProposeBatch(cs []Command, stopAtRefusal bool) ([]Answer, error)
}

// CarryOut proposes a round's commands in order through p. Once a
// placement command is not taken (refused, or the proposal failed), the
// round's later placement commands are skipped: each was decided on a
// snapshot that counted the ones before it as committed, and the next
// round decides them again.
//
// A BatchProposer gets each run of consecutive commands of one kind
// (placements, or the others) as one batch of at most raftfsm.MaxBatch: a
// round that places a thousand tasks of an array commits two entries,
// not a thousand, and the hosts apply them and wake as often. A run of
// placements is a batch that stops at its first refusal, which is the
// skipping above done inside the entry; the commands it did not reach
// are skipped.
func CarryOut(p Proposer, cmds []Command) {
	bp, batches := p.(BatchProposer)
	skipPlacement := false
	for len(cmds) > 0 {
		n := 1
		for batches && n < len(cmds) && n < raftfsm.MaxBatch && cmds[n].Placement == cmds[0].Placement {
			n++
		}
		run := cmds[:n]
		cmds = cmds[n:]
		if run[0].Placement && skipPlacement {
			for _, c := range run {
				p.Skipped(c)
			}
			continue
		}
		var answers []Answer
		var err error
		if n == 1 {
			var a Answer
			a, err = p.Propose(run[0])
			answers = []Answer{a}
		} else {
			answers, err = bp.ProposeBatch(run, run[0].Placement)
		}
		for i, c := range run {
			switch {
			case err != nil:
				skipPlacement = skipPlacement || c.Placement
			case i >= len(answers): // the batch stopped at a refused placement before it
				p.Skipped(c)
			default:
				if !answers[i].Taken() && c.Placement {
					skipPlacement = true
				}
				p.Answered(c, answers[i])
			}
		}
	}
}
