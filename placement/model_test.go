package placement_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

// TestPlace_ModelValidated: a network model that does not fit the nodes,
// or derives a link with a NaN, negative or infinite figure, is an invalid
// snapshot with a one-line error naming the link as if the derived links
// followed Links; a bad figure no derived link uses is no error.
func TestPlace_ModelValidated(t *testing.T) {
	t.Parallel()
	fresh := func() placement.Snapshot {
		return synth.Cluster(synth.Config{Nodes: 12, Switches: 3, Seed: 4, Derived: true, Model: true})
	}
	req := placement.Request{N: 8, Force: true, Oversubscribe: true}
	if _, err := placement.Place(fresh(), req); err != nil {
		t.Fatalf("valid model: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(*placement.Snapshot)
		want   string // "" = no error
	}{
		{"short tables", func(s *placement.Snapshot) { s.Model.Avail = s.Model.Avail[:3] }, "network model: tables for"},
		{"switch out of range", func(s *placement.Snapshot) { s.Model.Sw[2] = int32(s.Model.NS) }, "network model: node 2 on switch"},
		{"direct pair backwards", func(s *placement.Snapshot) {
			s.Model.Direct[5] = append(s.Model.Direct[5], placement.PairDirect{J: 1, BW: true})
		}, "network model: direct pair (5, 1)"},
		{"NaN capacity", func(s *placement.Snapshot) { s.Model.Avail[0] = math.NaN() }, "(node00 -> node02): avail_mbps = NaN"},
		{"negative switch-pair RTT", func(s *placement.Snapshot) {
			for k := range s.Model.SwRTTus {
				s.Model.SwRTTus[k] = -1
			}
		}, "rtt_us = -1"},
		{"short uplink capacities", func(s *placement.Snapshot) { s.Model.SwCap = make([]float64, 2) }, "network model: uplink capacity table of 2 entries"},
		{"NaN uplink capacity", func(s *placement.Snapshot) {
			s.Model.SwCap = make([]float64, s.Model.NS*s.Model.NS)
			s.Model.SwCap[1] = math.NaN()
		}, "uplink capacity NaN for switch pair 0->1"},
		{"NaN on an unknown node", func(s *placement.Snapshot) {
			s.Model.Known[3], s.Model.Avail[3] = false, math.NaN()
		}, ""},
	} {
		s := fresh()
		c.mutate(&s)
		_, err := placement.Place(s, req)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", c.name, err)
		case c.want != "" && (!errors.Is(err, placement.ErrInvalidSnapshot) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %v, want an invalid snapshot saying %q", c.name, err, c.want)
		}
	}
}
