package raftfsm

import (
	"fmt"
	"slices"
	"time"
)

// nodeRestarted fails, with retry, every live attempt that node b.Node had joined before its
// agent restarted: the attempt's processes there are gone, and an agent that launched it again
// would run it twice under one attempt number. Attempts the node adopted (NodeRestarted.Adopted)
// stay running, if they run on that node alone: an attempt with ranks elsewhere lost the streams
// that tied them to its head, whatever the node claims.
func (s *State) nodeRestarted(at time.Time, b *NodeRestarted) (Result, error) {
	if err := nonEmpty("node", b.Node); err != nil {
		return Result{}, err
	}
	var res Result
	changed := map[uint64]*Job{}
	for _, id := range s.SortedJobIDs() {
		j := s.Jobs[id]
		a := j.Current()
		if !j.State.Live() || a == nil || a.Ended() || !a.Holds(b.Node) {
			continue
		}
		if j.State == StateRunning && onlyOn(a, b.Node) && slices.Contains(b.Adopted, AttemptRef{ID: id, Attempt: a.N}) {
			continue // its processes outlived the agent, which adopts them
		}
		if j.State == StateRunning || a.Acked(b.Node) {
			reason := fmt.Sprintf("node %s restarted under attempt %d: its processes there ended with its agent", b.Node, a.N)
			changed[id] = failedCopy(j, at, reason, true)
			res.JobIDs = append(res.JobIDs, id)
		}
	}
	for _, j := range changed {
		s.setJob(j)
	}
	res.Noop = len(changed) == 0
	return res, nil
}

// onlyOn reports whether attempt a runs on node alone, which it heads: the only attempts whose
// processes can outlive their agent (a single copy under its supervisor).
func onlyOn(a *Attempt, node string) bool {
	return a.Head == node && len(a.Hosts) > 0 && !slices.ContainsFunc(a.Hosts, func(h Host) bool { return h.Node != node })
}
