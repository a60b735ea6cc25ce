package placement_test

import (
	"testing"

	"github.com/shoal-hpc/shoal/placement"
	"github.com/shoal-hpc/shoal/placement/synth"
)

// TestNetwork_EqualsReferenceSynth: the pair table equals the reference's
// bit for bit on seeded synthetic clusters: every pair measured, gaps,
// dead nodes, the leader's derived shape with directions and traffic (its
// derived pairs as Links and as a Model), and the sparse table above
// 1,024 nodes.
func TestNetwork_EqualsReferenceSynth(t *testing.T) {
	t.Parallel()
	var cases []synth.Config
	for seed := range int64(6) {
		cases = append(cases,
			synth.Config{Nodes: 5 + int(seed)*7, Switches: 1 + int(seed%4), Seed: seed, Unmeasured: 0.2 * float64(seed%3), DeadFrac: 0.1},
			synth.Config{Nodes: 20 + int(seed)*30, Switches: 2 + int(seed), Seed: seed, Derived: true})
	}
	cases = append(cases, synth.Config{Nodes: 1100, Switches: 9, Seed: 9, PeerLinks: 6},
		synth.Config{Nodes: 1040, Switches: 33, Seed: 10, Derived: true})
	for _, c := range cases {
		var alt *placement.Snapshot
		if c.Derived {
			m := c
			m.Model = true
			s := synth.Cluster(m)
			alt = &s
		}
		if err := placement.NetworkMatchesReference(synth.Cluster(c), alt); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if alt != nil {
			// What the tests carried (the leader's stamps), above the
			// fastest test on some switch pairs and below it on others.
			m := *alt.Model
			m.SwCap = make([]float64, len(m.SwPeak))
			for k, p := range m.SwPeak {
				m.SwCap[k] = p * (0.5 + float64(k%5)/4)
			}
			alt.Model = &m
			if err := placement.NetworkMatchesReference(synth.Cluster(c), alt); err != nil {
				t.Fatalf("%+v, with SwCap: %v", c, err)
			}
		}
	}
}
