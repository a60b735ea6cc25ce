package events

import "time"

// NodeMark is what the diff remembers of a node.
type NodeMark struct {
	// Status is alive, suspect, dead or left; Drain "", draining or drained.
	Status, Drain string
	// Boot and Seq version the node's own state (nodestate.NodeState).
	Boot int64
	Seq  uint64
	// Told is when the node's last event was: its state's updates are
	// told at most once per UpdateEvery.
	Told time.Time
}

// DiffNode is what happened to a node between two marks (prev nil: a node
// not seen before; cur nil: one gossip forgot) and the mark to keep: a
// change of status or drain at once, a restart (a new boot), and any other
// update of its state when the last event about it is at least every old.
func DiffNode(prev, cur *NodeMark, now time.Time, every time.Duration) ([]string, *NodeMark) {
	switch {
	case cur == nil && prev == nil:
		return nil, nil
	case cur == nil:
		return []string{"removed"}, nil
	case prev == nil:
		next := *cur
		next.Told = now
		out := []string{cur.Status}
		if cur.Drain != "" {
			out = append(out, cur.Drain)
		}
		return out, &next
	}
	var out []string
	if cur.Boot != prev.Boot && prev.Boot != 0 {
		out = append(out, "restarted")
	}
	if cur.Status != prev.Status {
		out = append(out, cur.Status)
	}
	if cur.Drain != prev.Drain {
		out = append(out, drainType(cur.Drain))
	}
	next := *cur
	next.Told = prev.Told
	switch {
	case len(out) > 0:
		next.Told = now
	case (cur.Seq != prev.Seq || cur.Boot != prev.Boot) && now.Sub(prev.Told) >= every:
		out, next.Told = []string{"updated"}, now
	default:
		// An update too soon after the last event waits: the mark keeps
		// the version last told, so the next look tells it.
		next.Seq, next.Boot = prev.Seq, prev.Boot
	}
	return out, &next
}

func drainType(d string) string {
	if d == "" {
		return "undrained"
	}
	return d
}

// ProbeMark is what the diff remembers of a probe process.
type ProbeMark struct {
	// State is starting, running, exited, stale or node-dead.
	State    string
	Restarts int
	PID      int
}

// DiffProbe is what happened to a probe between two marks (prev nil: a
// probe not seen before; cur nil: one no longer reported). Its beats are
// not events: the payload of the next one carries the last beat.
func DiffProbe(prev, cur *ProbeMark) []string {
	switch {
	case cur == nil && prev == nil:
		return nil
	case cur == nil:
		return []string{"removed"}
	case prev == nil:
		return []string{cur.State}
	}
	var out []string
	if cur.Restarts > prev.Restarts || cur.PID != prev.PID && prev.PID != 0 && cur.PID != 0 {
		out = append(out, "restarted")
	}
	if cur.State != prev.State {
		out = append(out, cur.State)
	}
	return out
}
