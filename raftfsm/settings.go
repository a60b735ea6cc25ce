package raftfsm

import (
	"fmt"
	"math"
)

// Settings are the cluster-wide placement weights (DESIGN.md, "The placement core"). They live in
// raft so that every node, and every future leader, places with the same weights.
type Settings struct {
	// Alpha weighs compute cost against network cost: T = Alpha*C + (1-Alpha)*N. In [0,1]; default 0.3.
	Alpha float64 `json:"alpha"`
	// WLT and WBW weigh latency and used bandwidth in the network cost. Each in [0,1], sum 1;
	// defaults 0.25 and 0.75.
	WLT float64 `json:"w_lt"`
	WBW float64 `json:"w_bw"`
	// Attr weighs the node attributes of the compute cost.
	Attr AttrWeights `json:"attr"`
}

// AttrWeights weighs seed 002's Table-1 attributes. Each in [0,1], sum 1.
type AttrWeights struct {
	Load        float64 `json:"load"`         // default 0.3
	Utilization float64 `json:"utilization"`  // default 0.2
	Flow        float64 `json:"flow"`         // default 0.2
	UsedMemory  float64 `json:"used_memory"`  // default 0.1
	Cores       float64 `json:"cores"`        // default 0.1
	Clock       float64 `json:"clock"`        // default 0.05
	TotalMemory float64 `json:"total_memory"` // default 0.05
}

// DefaultSettings returns the weights of DESIGN.md; a new FSM starts with them.
func DefaultSettings() Settings {
	return Settings{
		Alpha: 0.3,
		WLT:   0.25,
		WBW:   0.75,
		Attr: AttrWeights{
			Load: 0.3, Utilization: 0.2, Flow: 0.2, UsedMemory: 0.1, Cores: 0.1,
			Clock: 0.05, TotalMemory: 0.05,
		},
	}
}

// sumTolerance allows the rounding of decimal weights typed by a person ("0.1+0.2").
const sumTolerance = 1e-6

// Validate checks every weight is finite and in [0,1] and that each group sums to 1. The error
// names the field and the bound.
func (s Settings) Validate() error {
	fields := []struct {
		name string
		v    float64
	}{
		{"alpha", s.Alpha}, {"w_lt", s.WLT}, {"w_bw", s.WBW},
		{"attr.load", s.Attr.Load}, {"attr.utilization", s.Attr.Utilization},
		{"attr.flow", s.Attr.Flow}, {"attr.used_memory", s.Attr.UsedMemory},
		{"attr.cores", s.Attr.Cores}, {"attr.clock", s.Attr.Clock},
		{"attr.total_memory", s.Attr.TotalMemory},
	}
	for _, f := range fields {
		if err := unitInterval(f.name, f.v); err != nil {
			return err
		}
	}
	if sum := s.WLT + s.WBW; math.Abs(sum-1) > sumTolerance {
		return fmt.Errorf("%w: w_lt + w_bw = %g, must be 1", ErrInvalid, sum)
	}
	a := s.Attr
	sum := a.Load + a.Utilization + a.Flow + a.UsedMemory + a.Cores + a.Clock + a.TotalMemory
	if math.Abs(sum-1) > sumTolerance {
		return fmt.Errorf("%w: attribute weights sum to %g, must be 1", ErrInvalid, sum)
	}
	return nil
}

func unitInterval(name string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return fmt.Errorf("%w: %s = %g, must be in [0,1]", ErrInvalid, name, v)
	}
	return nil
}
