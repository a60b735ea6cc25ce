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

// CarryOut proposes a round's commands in order through p. Once a
// placement command is not taken (refused, or the proposal failed), the
// round's later placement commands are skipped: each was decided on a
// snapshot that counted the ones before it as committed, and the next
// round decides them again.
func CarryOut(p Proposer, cmds []Command) {
	skipPlacement := false
	for _, c := range cmds {
		if c.Placement && skipPlacement {
			p.Skipped(c)
			continue
		}
		a, err := p.Propose(c)
		if (err != nil || !a.Taken()) && c.Placement {
			skipPlacement = true
		}
		if err == nil {
			p.Answered(c, a)
		}
	}
}
