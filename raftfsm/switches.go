package raftfsm

import (
	"fmt"
	"maps"
	"time"
)

// SetSwitches (set_switches) records the switches the leader inferred from the bandwidth
// measurements for the nodes that declare none, replacing the whole set: a node
// absent from Switches has no inferred switch. It is in raft, not computed on each node, because
// its inputs (every node's network row) live on the servers, while every node, client or server,
// shows it in `shoal nodes` and places jobs on it.
type SetSwitches struct {
	Switches map[string]string `json:"switches"`
}

// MaxSwitchNodes bounds the nodes a set_switches command may name.
const MaxSwitchNodes = 65536

func (s *State) setSwitches(_ time.Time, b *SetSwitches) (Result, error) {
	if len(b.Switches) > MaxSwitchNodes {
		return Result{}, fmt.Errorf("%w: %d nodes, at most %d", ErrInvalid, len(b.Switches), MaxSwitchNodes)
	}
	for node, sw := range b.Switches {
		if err := nonEmpty("node", node); err != nil {
			return Result{}, err
		}
		if err := nonEmpty("switch of "+node, sw); err != nil {
			return Result{}, err
		}
	}
	if maps.Equal(s.Switches, b.Switches) {
		return Result{Noop: true}, nil
	}
	s.Switches = nil
	if len(b.Switches) > 0 {
		s.Switches = maps.Clone(b.Switches)
	}
	return Result{}, nil
}

// InferredSwitch is the switch recorded for node by set_switches, "" when none.
func (s *State) InferredSwitch(node string) string {
	return s.Switches[node]
}
